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
        tags: ['operations'],
        summary: 'Liveness and database check (no token)',
        response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.String() }), ...errorResponses(503) },
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
