import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The top of /docs: what a newcomer needs before the first call. Markdown, rendered by the page. */
const DESCRIPTION = `Configuration and telemetry of remotely monitored sites.

**Getting a token.** Send your client id and secret to \`POST /token\` (open it under *auth* below, *Try it out*):
\`{ "clientId": "…", "clientSecret": "…" }\`. Copy the \`accessToken\` of the answer, press **Authorize** and paste it;
every \`/v1\` request then carries \`Authorization: Bearer <token>\`. A token lasts \`expiresIn\` seconds; ask for a new one then.
On a fresh embedded database the demo client's id and secret are printed once at the first start; if the secret is lost,
give it a new one with \`npm run -s site-monitor -- client rotate-secret demo\` (server stopped) or, from another admin
client, \`POST /v1/admin/clients/demo/secret\`.

**Errors** share one body: \`{ statusCode, error, message, details? }\`, \`details\` pointing at the offending values.
Every \`/v1\` route may answer 429 when the per-client rate limit is exceeded (see the \`x-ratelimit-*\` headers).`;

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'site-monitor', version: '1', description: DESCRIPTION },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // The page must work over plain HTTP from any host (http://host:8080/docs): with
    // upgrade-insecure-requests the browser would fetch its scripts over HTTPS and show nothing.
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/g, ''),
    uiConfig: { deepLinking: true },
  });
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger());
}
