import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import {
  addSiteTelemetry,
  countSites,
  listSites,
  type SortKey,
} from '../../../sites/repository.js';
import { SitePage, SitesQuery } from './schema.js';

const listSitesSchema = {
  operationId: 'listSites',
  tags: ['sites'],
  summary: 'List the sites this client may see, a page at a time',
  querystring: SitesQuery,
  response: { 200: SitePage, ...securedErrors() },
};

const listVisibleSites: TypedHandler<typeof listSitesSchema> = async (request) => {
  const q = request.query;
  const filter = {
    siteIds: request.access!.siteIds,
    name: q.name,
    active: q.active,
    companyId: q.companyId,
  };
  const order = {
    by: q.sortBy?.toLowerCase() as SortKey | undefined,
    direction: (q.sortDirection?.toLowerCase() ?? 'asc') as 'asc' | 'desc',
  };
  const [total, rows] = await Promise.all([
    countSites(request.db, filter),
    listSites(request.db, filter, order, q.perPage, (q.page - 1) * q.perPage),
  ]);
  const data =
    q.dataType === 'additional'
      ? await addSiteTelemetry(request.db, rows)
      : rows.map(({ LastCommunication: _, ...basic }) => basic);
  return {
    data,
    page: q.page,
    perPage: q.perPage,
    total,
    totalPages: Math.ceil(total / q.perPage),
  };
};

export async function siteRoutes(app: FastifyTypebox): Promise<void> {
  app.get('/sites', { config: { right: 'read' }, schema: listSitesSchema }, listVisibleSites);
}
