import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loadSettings, type Settings } from './settings.js';
import { connect, type Database } from './db/index.js';
import { createTokenService, loadJwtSecret } from './auth/tokens.js';
import { registerTokenResolution } from './plugins/auth.js';
import { registerRequestDeadlines } from './plugins/deadline.js';
import { registerErrorHandling } from './plugins/errors.js';
import {
  answerFrameworkError,
  clientErrorAnswers,
  MAX_PARAM_LENGTH,
} from './plugins/framework-errors.js';
import { registerValidation } from './plugins/validation.js';
import { registerRateLimit } from './plugins/rate-limit.js';
import { registerDocs } from './plugins/docs.js';
import { registerDecompression } from './plugins/decompression.js';
import { registerRouteTable } from './plugins/methods.js';
import { registerMetrics } from './plugins/metrics.js';
import type { ServiceMetrics } from './metrics.js';
import { ErrorBody } from './schemas/common.js';
import { routes } from './routes/index.js';
import { StreamService } from './stream/service.js';
import { TelemetryService } from './telemetry/service.js';
import { MqttService } from './mqtt/service.js';
import { NotificationService } from './alarms/notify/service.js';
import { ShelfExpiry } from './alarms/expiry.js';
import { AlarmRulesService } from './alarms/rules/service.js';
import type { FastifyTypebox } from './http.js';

export type { FastifyTypebox } from './http.js';

export interface BuildOptions {
  /** An open, migrated database; when absent the configured one is opened (and closed with the app). */
  db?: Database;
  logger?: boolean | object;
  /** The built console to serve at /console/ (default: dist/console). */
  consoleDir?: string;
  /** Collect the Prometheus metrics into this (server.ts serves them on a port of their own); none when absent. */
  metrics?: ServiceMetrics;
}

/** TRUST_PROXY as Fastify takes it: off, every peer, a hop count, or the balancers' addresses. */
function trustProxy(
  setting: string | undefined,
): boolean | string | ((address: string, hop: number) => boolean) {
  if (setting === undefined) return false;
  if (setting === 'true') return true;
  if (/^[0-9]+$/.test(setting)) {
    const hops = Number(setting);
    return (_address, hop) => hop < hops;
  }
  return setting.replace(/\s+/g, '');
}

export async function buildApp(
  settings: Settings = loadSettings(),
  opts: BuildOptions = {},
): Promise<FastifyTypebox> {
  const app = Fastify({
    logger: opts.logger ?? { level: settings.LOG_LEVEL },
    bodyLimit: settings.BODY_LIMIT,
    // Ids arrive as path text ("12"); a trailing slash is the same route.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // The router's and the HTTP parser's own answers, in the error body (plugins/framework-errors.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: clientErrorAnswers({
      headersTimeoutMs: settings.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: settings.REQUEST_TIMEOUT_MS,
    }),
    return503OnClosing: true,
    trustProxy: trustProxy(settings.TRUST_PROXY),
    // Slow clients (half-sent headers, a body trickling in) are cut off; the server looks every
    // second or so, so a connection is closed at most about that long after its deadline.
    requestTimeout: settings.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: settings.HEADERS_TIMEOUT_MS,
      requestTimeout: settings.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1000, Math.floor(settings.HEADERS_TIMEOUT_MS / 4)),
      ),
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const db = opts.db ?? (await connect(settings));
  if (!opts.db) app.addHook('onClose', async () => db.close());
  // Every call is bounded in time (db/types.ts, bounded); the CLI and migrations are not. The
  // background services use app.db; a request uses request.db, bounded from its arrival.
  app.decorate('db', db.bounded(settings.QUERY_TIMEOUT_MS));
  app.decorate('settings', settings);
  app.decorate(
    'tokens',
    createTokenService(await loadJwtSecret(db, settings.JWT_SECRET), settings.TOKEN_TTL),
  );
  const stream = new StreamService(app.db, settings, app.log);
  await stream.start();
  app.decorate('stream', stream);
  // Streams end before the server waits for open connections, and before the database closes.
  app.addHook('preClose', () => stream.close());
  const metrics = opts.metrics;
  // Limit rules and communication loss: evaluated after every commit of stored data.
  const alarmRules = new AlarmRulesService(db.bounded(settings.WRITE_TIMEOUT_MS), {
    log: app.log,
    onChange: () => stream.committed(),
  });
  app.decorate('alarmRules', alarmRules);
  const committed = () => {
    stream.committed();
    alarmRules.committed();
  };
  const telemetry = await TelemetryService.create(app.db, settings, {
    onCommit: committed,
    onJobs: (jobs, xid) => alarmRules.stored(jobs, xid),
    log: app.log,
    onStored: metrics
      ? ({ kind, type, source, count }) => metrics.ingested(kind, type, source, count)
      : undefined,
    onArchived: metrics
      ? (kind, result, count) => metrics.archived(kind, result, count)
      : undefined,
  });
  app.decorate('telemetry', telemetry);
  app.addHook('onReady', async () => telemetry.start());
  // Edge devices over MQTT (off without MQTT_URL). It stops taking messages, and finishes those it
  // is storing, before the writer is waited for.
  const mqtt = settings.MQTT_URL
    ? new MqttService({
        db: app.db,
        settings,
        telemetry,
        log: app.log,
        onMessage: metrics ? (result) => metrics.mqttMessage(result) : undefined,
        onCommit: committed,
      })
    : undefined;
  app.decorate('mqtt', mqtt);
  if (mqtt) {
    app.addHook('onReady', async () => mqtt.start());
    app.addHook('preClose', () => mqtt.close());
  }
  // Alarm shelves end on time (contract 16): every instance checks, each shelf ends once.
  const shelves = new ShelfExpiry(app.db, (err) =>
    app.log.warn({ err }, 'ending alarm shelves failed; the next check retries'),
  );
  app.addHook('onReady', async () => void shelves.start());
  app.addHook('preClose', () => shelves.stop());
  // Writes of requests whose client has gone (so the server may close at once) still finish before the database closes.
  app.addHook('preClose', () => telemetry.close());
  app.addHook('onReady', async () => alarmRules.start());
  // Notifications (contract 16): due steps into the outbox, the outbox delivered; every instance.
  const notifications = new NotificationService(app.db, settings, {
    log: app.log,
    onResult: metrics ? (channel, result) => metrics.notification(channel, result) : undefined,
  });
  app.addHook('onReady', async () => notifications.start());
  app.addHook('preClose', () => notifications.close());
  app.addHook('preClose', () => alarmRules.close());

  // First of the hooks, so that every answer is timed (a 401 or 429 too).
  if (metrics) await registerMetrics(app, metrics);
  app.addSchema(ErrorBody);
  registerRequestDeadlines(app, db, settings.QUERY_TIMEOUT_MS);
  registerRouteTable(app);
  registerValidation(app);
  registerDecompression(app, settings.BODY_LIMIT);
  registerErrorHandling(app);
  await registerDocs(app);
  registerTokenResolution(app, settings.CLIENT_CACHE_MS);
  await registerRateLimit(app, settings);

  await app.register(routes, { consoleDir: opts.consoleDir });
  return app;
}
