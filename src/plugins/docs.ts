import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas/common.js';
import { liftTitledSchemas } from './openapi-components.js';

/** The product as package.json names it (beside both src/plugins and dist/plugins, two levels up). */
export const PRODUCT = (() => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    name: string;
    version: string;
    license?: string;
  };
  // npm's "UNLICENSED" (or no licence at all) means no licence is granted: proprietary.
  const license = !pkg.license || pkg.license === 'UNLICENSED' ? 'Proprietary' : pkg.license;
  return { name: pkg.name, version: pkg.version, license };
})();

const escapeXml = (s: string) =>
  s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
/** The /docs page's top bar and tab icon: the product's name and version instead of the viewer's logo. */
const LOGO = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" width="260" height="40" viewBox="0 0 260 40"><text x="0" y="28" font-family="system-ui, sans-serif" font-size="24" font-weight="700" fill="#fff">${escapeXml(PRODUCT.name)}<tspan font-size="15" font-weight="400" dx="8">${escapeXml(PRODUCT.version)}</tspan></text></svg>`,
);
const ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#12263f"/><path d="M3 11l3-4 3 2 4-5" stroke="#ffb74d" stroke-width="2" fill="none"/></svg>',
);

/** The top of /docs: what a newcomer needs before the first call. Markdown, rendered by the page. */
const DESCRIPTION = `Configuration and telemetry of remotely monitored sites.

**Getting a token.** Send your client id and secret to \`POST /token\` (open it under *auth* below, *Try it out*):
\`{ "clientId": "…", "clientSecret": "…" }\`. Copy the \`accessToken\` of the answer, press **Authorize** and paste it;
every \`/v1\` request then carries \`Authorization: Bearer <token>\`. A token lasts \`expiresIn\` seconds; ask for a new one then.
On a fresh embedded database the demo client's id and secret are printed once at the first start; if the secret is lost,
give it a new one with \`npm run -s site-monitor -- client rotate-secret demo\` (server stopped) or, from another admin
client, \`POST /v1/admin/clients/demo/secret\`.

**Roles.** A client reaches its sites and cameras, and its role says what it may do there: \`full\` (everything,
the default), \`viewer\` (reads only), \`operator\` (a viewer that may also acknowledge, shelve, unshelve and resolve
alarms) or \`edge\` (uploads, alarm send, resolve and the active list, configuration reads). Each operation below names
the roles that may call it; any other role gets 403. \`GET /v1/me\` tells a client its own role and reach.

**Errors** share one body: \`{ statusCode, error, message, details? }\`, \`details\` pointing at the offending values.
Every \`/v1\` route may answer 429 when the per-client rate limit is exceeded (see the \`x-ratelimit-*\` headers).
A path asked with a method it does not take answers 405 with an \`Allow\` header.

**Bodies** are JSON in UTF-8, optionally compressed (\`Content-Encoding: gzip\`, \`deflate\` or \`br\`; the body limit counts
the decompressed bytes; another encoding is a 415). A NUL character or a lone UTF-16 surrogate in any string is a 400.
Times are ISO 8601 date-times with a time of day (UTC without an offset); hour 24, second 60 or a date alone is a 400.

**Generated clients.** Every operation has a stable \`operationId\` and every request and response body the interface
names is a component of that name (\`SensorLogDto\`, \`UploadResponseDto\`, \`SiteConfigDto\`; a light variant adds \`Light\`,
as in \`SiteConfigDtoLight\`). The interface calls both alarm batch bodies \`MultiSiteAlarmsDto\`; here the send form keeps
that name and the resolve form is \`MultiSiteAlarmsResolveDto\`, so each operation's type is exact.`;

/** Every tag an operation uses, described once (the page groups operations by them). */
const TAGS = [
  { name: 'auth', description: "Client credentials for a bearer token; the token's client" },
  { name: 'operations', description: 'Health of the service' },
  { name: 'sites', description: 'The sites a client may see' },
  {
    name: 'configuration',
    description: 'Equipment and site configuration, whole, light or changed since a time',
  },
  {
    name: 'telemetry upload',
    description: 'Historical logs and live readings from the edge; each request atomic',
  },
  { name: 'telemetry download', description: 'Log summaries and raw sensor logs, as JSON or CSV' },
  {
    name: 'alarms',
    description:
      'Send, resolve, acknowledge and shelve alarms; the active list, the alarm list and the journal',
  },
  {
    name: 'transactions',
    description: 'Transaction and change logs, ticket and motion-capture images',
  },
  {
    name: 'live stream',
    description:
      'Server-Sent Events: readings, uploads, alarms and configuration changes as they are committed',
  },
  { name: 'administration', description: 'API clients and provisioning (admin clients only)' },
];

/**
 * A response declared without a description gets "Default Response" from the generator; it gets the
 * status's name and the operation's summary instead ("OK: Sensor configuration").
 */
function describeResponses<T>(document: T): T {
  const paths =
    (
      document as {
        paths?: Record<
          string,
          Record<string, { summary?: string; responses?: Record<string, { description?: string }> }>
        >;
      }
    ).paths ?? {};
  for (const operations of Object.values(paths))
    for (const op of Object.values(operations))
      for (const [code, response] of Object.entries(op.responses ?? {}))
        if (response.description === 'Default Response')
          response.description = [STATUS_CODES[Number(code)] ?? code, op.summary]
            .filter(Boolean)
            .join(': ');
  return document;
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  let json: string | undefined;
  // Every route that reads a body can answer 413 (over BODY_LIMIT) and 415 (not JSON): listed once here.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as
      { body?: unknown; response?: Record<string, unknown> } | undefined;
    if (!schema?.body || !schema.response) return;
    schema.response = { ...errorResponses(413, 415), ...schema.response };
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: PRODUCT.name,
        version: PRODUCT.version,
        description: DESCRIPTION,
        // Proprietary: no rights are granted beyond the agreement under which a client was issued its credentials.
        license: { name: PRODUCT.license },
      },
      // Relative: the instance that serves this document is the one it describes, whatever its host and port.
      servers: [{ url: '/', description: 'this instance' }],
      tags: TAGS,
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // Built once, on the first request for the document; the route schemas themselves are left as they are.
    transformObject: (document) =>
      describeResponses(
        liftTitledSchemas(
          'openapiObject' in document ? document.openapiObject : document.swaggerObject,
        ),
      ),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // The page must work over plain HTTP from any host (http://host:8080/docs): with
    // upgrade-insecure-requests the browser would fetch its scripts over HTTPS and show nothing.
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/g, ''),
    uiConfig: { deepLinking: true },
    logo: { type: 'image/svg+xml', content: LOGO, href: '/docs', target: '_self' },
    theme: {
      title: `${PRODUCT.name} ${PRODUCT.version} API`,
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: ICON,
        },
      ],
    },
  });
  // The document describes itself too (the /docs page and its files stay out of it: they are the viewer).
  app.get(
    '/openapi.json',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'getOpenApiDocument',
        tags: ['operations'],
        security: [],
        summary: 'This OpenAPI document (no token)',
        description:
          'OpenAPI 3.0.3, JSON: every operation with its operationId, and every request and response body as a named component. Never rate-limited, no token.',
        response: {
          200: Type.Object(
            {
              openapi: Type.String({ description: '3.0.3' }),
              info: Type.Object({}, { additionalProperties: true }),
              paths: Type.Object({}, { additionalProperties: true }),
              components: Type.Object({}, { additionalProperties: true }),
            },
            { title: 'OpenApiDocument', additionalProperties: true },
          ),
        },
      },
    },
    // Sent as text, built once: the document as it is, not re-serialized through the schema above.
    async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send((json ??= JSON.stringify(app.swagger()))),
  );
}
