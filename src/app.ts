import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawReplyDefaultExpression, type RawRequestDefaultExpression, type RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loadConfig, type Config } from './config.js';
import { connect, type Database } from './db/index.js';
import { createTokenService, loadJwtSecret, type TokenService } from './auth/tokens.js';
import { registerTokenResolution } from './auth/hooks.js';
import { tokenRoutes } from './auth/routes.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerValidation } from './plugins/validation.js';
import { registerRateLimit } from './plugins/rate-limit.js';
import { registerDocs } from './plugins/docs.js';
import { ErrorBody } from './schemas/common.js';
import { v1Routes } from './routes/v1/index.js';
import { healthRoutes } from './routes/health.js';

export type FastifyTypebox = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
    config: Config;
    tokens: TokenService;
  }
}

export interface BuildOptions {
  /** An open, migrated database; when absent the configured one is opened (and closed with the app). */
  db?: Database;
  logger?: boolean | object;
}

export async function buildApp(config: Config = loadConfig(), opts: BuildOptions = {}): Promise<FastifyTypebox> {
  const app = Fastify({
    logger: opts.logger ?? { level: config.LOG_LEVEL },
    bodyLimit: config.BODY_LIMIT,
    // Ids arrive as path text ("12"); a trailing slash is the same route.
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const db = opts.db ?? (await connect(config));
  if (!opts.db) app.addHook('onClose', async () => db.close());
  app.decorate('db', db);
  app.decorate('config', config);
  app.decorate('tokens', createTokenService(await loadJwtSecret(db, config.JWT_SECRET), config.TOKEN_TTL));

  app.addSchema(ErrorBody);
  registerValidation(app);
  registerErrorHandling(app);
  await registerDocs(app);
  registerTokenResolution(app, config.CLIENT_CACHE_MS);
  await registerRateLimit(app, config);

  await app.register(healthRoutes);
  await app.register(tokenRoutes);
  await app.register(v1Routes, { prefix: '/v1' });
  return app;
}
