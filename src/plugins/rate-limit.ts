import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../settings.js';
import { HttpError } from '../errors.js';
import { answerNoRoute } from './methods.js';

/**
 * Per client on /v1 (per IP for /token and for requests without a valid token). With REDIS_URL the
 * counters live in Redis, so every instance behind a balancer counts against the same limit.
 */
export async function registerRateLimit(app: FastifyInstance, settings: Settings): Promise<void> {
  let redis: Redis | undefined;
  if (settings.REDIS_URL) {
    redis = new Redis(settings.REDIS_URL, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
      lazyConnect: true,
    });
    redis.on('error', (err) => app.log.warn({ err: err.message }, 'rate-limit store unavailable'));
    await redis.connect();
    app.addHook('onClose', async () => {
      await redis?.quit().catch(() => redis?.disconnect());
    });
  }
  await app.register(rateLimit, {
    global: true,
    max: settings.RATE_LIMIT_MAX,
    timeWindow: settings.RATE_LIMIT_WINDOW_MS,
    redis,
    nameSpace: 'site-monitor:rl:',
    // A broken counter store must not take the service down with it.
    skipOnError: true,
    keyGenerator: (request) =>
      request.routeOptions.url === '/token' || !request.access
        ? `ip:${request.ip}`
        : `client:${request.access.client.clientId}`,
    errorResponseBuilder: (_request, context) =>
      new HttpError(
        429,
        `rate limit exceeded: ${context.max} requests per ${context.after}; retry in ${Math.ceil(context.ttl / 1000)} s`,
      ),
  });
  // Requests no route serves (404, 405) count against the same limit (probing is limited too) and carry its headers.
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, answerNoRoute);
}
