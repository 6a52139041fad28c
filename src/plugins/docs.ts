import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'site-monitor',
        version: '1',
        description:
          'Configuration and telemetry of remotely monitored sites. Get a token with POST /token, then send ' +
          '`Authorization: Bearer <token>` on every /v1 request. Errors share one body: ' +
          '`{ statusCode, error, message, details? }`. Every route may answer 429 when the per-client rate limit is exceeded.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
}
