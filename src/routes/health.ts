import { Type } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../http.js';
import { HttpError } from '../errors.js';
import { errorResponses } from '../schemas/common.js';

/** A balancer gives up on a check after a few seconds: /health answers well within them. */
const HEALTH_TIMEOUT_MS = 1500;

const healthSchema = {
  operationId: 'getHealth',
  tags: ['operations'],
  security: [],
  summary: 'Liveness and database check (no token)',
  description:
    'For load balancers and monitors: never rate-limited, no token. 503 (with retry-after) while the database does not answer within 1.5 s. ' +
    'With MQTT_URL set, `mqtt` tells whether the broker connections are up and whether this instance is the Sparkplug host; ' +
    'a broker that is down never fails the check (the service still takes HTTP uploads).',
  response: {
    200: Type.Object(
      {
        status: Type.Literal('ok'),
        database: Type.String({ description: 'pglite (embedded) or postgres' }),
        mqtt: Type.Optional(
          Type.Object(
            {
              connected: Type.Boolean({
                description: 'every MQTT connection of this instance is up',
              }),
              sparkplugHost: Type.Boolean({
                description: 'this instance is the Sparkplug host application now',
              }),
            },
            { description: 'only when MQTT_URL is set' },
          ),
        ),
      },
      { title: 'HealthDto' },
    ),
    ...errorResponses(503),
  },
};

const checkHealth: TypedHandler<typeof healthSchema> = async (request) => {
  const timeout = Math.min(HEALTH_TIMEOUT_MS, request.server.settings.QUERY_TIMEOUT_MS);
  try {
    await request.db.bounded(timeout).query('SELECT 1');
  } catch {
    throw new HttpError(503, 'database unavailable');
  }
  const mqtt = request.server.mqtt?.status();
  return { status: 'ok' as const, database: request.db.kind, ...(mqtt && { mqtt }) };
};

export async function healthRoutes(app: FastifyTypebox): Promise<void> {
  app.get('/health', { config: { rateLimit: false }, schema: healthSchema }, checkHealth);
}
