import type { FastifyRequest } from 'fastify';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { checkBeforeBody } from '../../../plugins/auth.js';
import { errorResponses, securedErrors } from '../../../schemas/common.js';
import {
  changeClient,
  createClient,
  listVisibleClients,
  rotateSecret,
} from '../../../admin/clients.js';
import { importAsAdmin } from '../../../admin/import.js';
import {
  ClientDto,
  ClientPage,
  ClientParams,
  ClientSecretDto,
  ClientsQuery,
  CreateClientDto,
  CreatedClientDto,
  ImportDocumentDto,
  ImportSummaryDto,
  UpdateClientDto,
} from './schema.js';

// Clients and provisioning over HTTP, for a running service (the embedded database cannot be opened
// by the CLI while the server has it). Admin clients only; the rules: docs/administration.md.

const SCOPE =
  'Needs a client with admin: true and the role full (else 403). An admin whose siteIds is a list sees and changes only clients whose sites and ' +
  'cameras all lie within its own, and gives only sites and cameras it has itself (403 otherwise). ';

/** Every admin action goes to the log: who, when (the log line's time), what; never a secret. */
const audit = (request: FastifyRequest, action: string, what: Record<string, unknown>) =>
  request.log.info(
    { audit: { actor: request.access!.client.clientId, action, ...what } },
    `admin: ${action}`,
  );

const tags = ['administration'];

const listClientsSchema = {
  operationId: 'listClients',
  tags,
  summary: 'List API clients (never their secrets)',
  description: `${SCOPE}Ordered by clientId, a page at a time (perPage default 100, at most 500).`,
  querystring: ClientsQuery,
  response: { 200: ClientPage, ...securedErrors(403) },
};

const listClients: TypedHandler<typeof listClientsSchema> = async (request) => {
  const page = request.query.page ?? 1;
  const perPage = request.query.perPage ?? 100;
  const { clients, total } = await listVisibleClients(request.db, request.access!, {
    limit: perPage,
    offset: (page - 1) * perPage,
  });
  return { data: clients, page, perPage, total, totalPages: Math.ceil(total / perPage) };
};

const createClientSchema = {
  operationId: 'createClient',
  tags,
  summary: 'Create an API client',
  description:
    `${SCOPE}Without clientSecret a random one is generated and returned once, in this answer only. An existing clientId is a 409 ` +
    '(change it with PATCH, or rotate its secret). Unknown site or camera ids: 400. cameraIds defaults to none, role to full.',
  body: CreateClientDto,
  response: { 201: CreatedClientDto, ...securedErrors(403, 409, 413, 415) },
};

const addClient: TypedHandler<typeof createClientSchema> = async (request, reply) => {
  const { client, generatedSecret } = await createClient(request.db, request.access!, request.body);
  audit(request, 'create client', {
    clientId: client.clientId,
    siteIds: client.siteIds,
    cameraIds: client.cameraIds,
    admin: client.admin,
    role: client.role,
  });
  return reply
    .status(201)
    .send(generatedSecret ? { ...client, clientSecret: generatedSecret } : client);
};

const updateClientSchema = {
  operationId: 'updateClient',
  tags,
  summary: "Change a client's sites, cameras, admin right, role, or disable / enable it",
  description:
    `${SCOPE}Takes effect at once: a disabled client's tokens answer 401 from the next request, a new role or new sites ` +
    'apply to its existing tokens from the next request. An admin cannot disable itself or drop its own admin right ' +
    'or role full (403). Unknown client: 404 (before 403).',
  params: ClientParams,
  body: UpdateClientDto,
  response: { 200: ClientDto, ...securedErrors(403, 404, 413, 415) },
};

const updateClient: TypedHandler<typeof updateClientSchema> = async (request) => {
  const { clientId } = request.params;
  const { client, changes } = await changeClient(
    request.db,
    request.access!,
    clientId,
    request.body,
  );
  request.server.forgetClient(clientId);
  audit(request, 'update client', { clientId, changes });
  return client;
};

const rotateSecretSchema = {
  operationId: 'rotateClientSecret',
  tags,
  summary: 'Give a client a new random secret (shown once)',
  description:
    `${SCOPE}The old secret stops working, and so do the tokens issued before the rotation. This is how to recover a client ` +
    'whose secret was lost (the demo client included). Unknown client: 404 (before 403).',
  params: ClientParams,
  response: { 200: ClientSecretDto, ...securedErrors(403, 404) },
};

const rotateClientSecret: TypedHandler<typeof rotateSecretSchema> = async (request) => {
  const { clientId } = request.params;
  const clientSecret = await rotateSecret(request.db, request.access!, clientId);
  request.server.forgetClient(clientId);
  audit(request, 'rotate client secret', { clientId });
  return { clientId, clientSecret };
};

const importSchema = {
  operationId: 'importProvisioningDocument',
  tags,
  summary: 'Upsert a provisioning document, in one transaction',
  description:
    `${SCOPE}An admin whose siteIds is a list may import only records of its own sites (new, or existing there now), no companies, ` +
    'and clients within its own sites and cameras. A bad document answers 400 naming the first bad record ' +
    '(details: its JSON pointer) and changes nothing. Larger documents than the body limit: use the CLI.',
  body: ImportDocumentDto,
  response: {
    200: ImportSummaryDto,
    ...securedErrors(403, 413, 415),
    ...errorResponses(400),
  },
};

const importDocument: TypedHandler<typeof importSchema> = async (request) => {
  const { summary, clientIds } = await importAsAdmin(request.db, request.access!, request.body);
  for (const id of clientIds) request.server.forgetClient(id);
  const changed = Object.fromEntries(
    Object.entries(summary)
      .filter(([, c]) => c.received)
      .map(([list, c]) => [list, c]),
  );
  audit(request, 'import document', { lists: changed });
  return summary;
};

export async function adminRoutes(app: FastifyTypebox): Promise<void> {
  checkBeforeBody(app, async (request) => request.access!.assertAdmin());
  const config = { right: 'administer' } as const;
  app.get('/clients', { config, schema: listClientsSchema }, listClients);
  app.post('/clients', { config, schema: createClientSchema }, addClient);
  app.patch('/clients/:clientId', { config, schema: updateClientSchema }, updateClient);
  app.post('/clients/:clientId/secret', { config, schema: rotateSecretSchema }, rotateClientSecret);
  app.post(
    '/import',
    {
      // The import checks the document itself, naming the first bad record as the CLI does; the schema documents it.
      validatorCompiler: () => () => true,
      // One transaction for a whole document: it may take longer than a read, but not for ever.
      config: { ...config, answerWithinMs: app.settings.IMPORT_TIMEOUT_MS },
      schema: importSchema,
    },
    importDocument,
  );
}
