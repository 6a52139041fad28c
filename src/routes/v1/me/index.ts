import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { MeDto } from './schema.js';

// Contract 16: who the token's client is, so that a console shows only what its role allows.

const meSchema = {
  operationId: 'showMe',
  tags: ['auth'],
  summary: "The token's client: its id, role, admin right, sites and cameras",
  description:
    'Answered from the client as it is now (a change by an administrator shows from the next request), for every ' +
    'role. siteIds and cameraIds are lists, or "*" for every site or camera.',
  response: { 200: MeDto, ...securedErrors() },
};

const showMe: TypedHandler<typeof meSchema> = async (request) => {
  const { clientId, role, admin, siteIds, cameraIds } = request.access!.client;
  return { clientId, role, admin, siteIds: siteIds ?? '*', cameraIds: cameraIds ?? '*' };
};

export async function meRoutes(app: FastifyTypebox): Promise<void> {
  app.get('/me', { config: { right: 'self' }, schema: meSchema }, showMe);
}
