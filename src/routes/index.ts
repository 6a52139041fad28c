import type { FastifyTypebox } from '../http.js';
import { healthRoutes } from './health.js';
import { tokenRoutes } from './token.js';
import { v1Routes } from './v1/index.js';
import { consoleRoutes } from './console.js';

/** The whole HTTP surface: public routes, then everything under /v1 (bearer token required), then the console's files. */
export async function routes(app: FastifyTypebox, opts: { consoleDir?: string }): Promise<void> {
  await app.register(healthRoutes);
  await app.register(tokenRoutes);
  await app.register(v1Routes, { prefix: '/v1' });
  await app.register(consoleRoutes, { dir: opts.consoleDir });
}
