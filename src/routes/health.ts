import { Type } from '@sinclair/typebox';
import type { FastifyTypebox } from '../http.js';
import { HttpError } from '../errors.js';
import { errorResponses } from '../schemas/common.js';

export async function healthRoutes(app: FastifyTypebox): Promise<void> {
  app.get(
    '/health',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'getHealth',
        tags: ['operations'],
        security: [],
        summary: 'Liveness and database check (no token)',
        description: 'For load balancers and monitors: never rate-limited, no token. 503 while the database does not answer.',
        response: {
          200: Type.Object(
            { status: Type.Literal('ok'), database: Type.String({ description: 'pglite (embedded) or postgres' }) },
            { title: 'HealthDto' },
          ),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      try {
        await app.db.query('SELECT 1');
      } catch {
        throw new HttpError(503, 'database unavailable');
      }
      return { status: 'ok' as const, database: app.db.kind };
    },
  );
}
