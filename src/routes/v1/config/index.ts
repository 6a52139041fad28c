import type { FastifyReply } from 'fastify';
import type { FastifyTypebox } from '../../../http.js';
import type { SiteView } from '../../../config/reader.js';
import { ConfigService, type SiteViewAnswer } from '../../../config/service.js';
import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../../../equipment.js';
import { securedErrors } from '../../../schemas/common.js';
import { byIdDoc, routeSchema, siteViewDoc } from './operations.js';
import { idParams, SiteQuery, SiteUpdatesQuery, UpdatesQuery } from './schema.js';

// Interface §4.3: 11 paths, each with its /updates twin, and a /light variant of each but the two
// compact ones: 42 routes. A kind's paths are named by the registry (EQUIPMENT[kind].pathSegment and .config).

const LIGHTS = [false, true];

/** The whole-site views in the order of their paths: `/site/<kind path>`, then the others. */
const SITE_VIEWS: [url: string, view: SiteView][] = [
  ...TELEMETRY_KINDS.map((k): [string, SiteView] => [`/site/${EQUIPMENT[k].pathSegment}`, k]),
  ['/site/actuators', 'actuators'],
  ['/site', 'site'],
  ['/site/compact', 'compact'],
];

export async function configRoutes(app: FastifyTypebox): Promise<void> {
  const config = new ConfigService();
  for (const kind of TELEMETRY_KINDS) byIdRoutes(app, config, kind);
  for (const [url, view] of SITE_VIEWS) siteViewRoutes(app, config, url, view);
}

/**
 * GET /sensors/:sensorId, /meters/:meterId, /pumps/:pumpId and /tanks/:tankGroupId, each with
 * /light, and under /updates/ with startDate: readRegisters and readRegisterUpdates.
 */
function byIdRoutes(app: FastifyTypebox, config: ConfigService, kind: TelemetryKind): void {
  const {
    pathSegment: path,
    config: { param },
  } = EQUIPMENT[kind];
  const doc = byIdDoc(kind);
  const params = idParams(param);
  const errors = securedErrors(403, 404);
  for (const light of LIGHTS)
    app.get(
      `/${path}/:${param}${light ? '/light' : ''}`,
      {
        config: { right: 'read-config' },
        schema: routeSchema(doc, { updates: false, light }, { params }, errors),
      },
      async function readRegisters(request) {
        const id = request.params[param];
        return config.registersById(request.db, request.access!, kind, id, { light });
      },
    );
  for (const light of LIGHTS)
    app.get(
      `/updates/${path}/:${param}${light ? '/light' : ''}`,
      {
        config: { right: 'read-config' },
        schema: routeSchema(
          doc,
          { updates: true, light },
          { params, querystring: UpdatesQuery },
          errors,
        ),
      },
      async function readRegisterUpdates(request) {
        const { startDate } = request.query;
        const id = request.params[param];
        return config.registersById(request.db, request.access!, kind, id, { light, startDate });
      },
    );
}

/**
 * GET /site/sensors, /site/meters, /site/pumps, /site/tanks, /site/actuators and /site, each with
 * /light, and /site/compact; all under /updates/ with startDate: readSiteView, readSiteViewUpdates.
 */
function siteViewRoutes(app: FastifyTypebox, config: ConfigService, url: string, view: SiteView) {
  const doc = siteViewDoc(view);
  const lights = view === 'compact' ? [false] : LIGHTS;
  const errors = securedErrors(403);
  for (const light of lights)
    app.get(
      `${url}${light ? '/light' : ''}`,
      {
        config: { right: 'read-config' },
        schema: routeSchema(doc, { updates: false, light }, { querystring: SiteQuery }, errors),
      },
      async function readSiteView(request, reply) {
        const { siteId } = request.query;
        const options = { light, ...httpOptions(request.headers, reply) };
        return replyWith(
          reply,
          await config.siteView(request.db, request.access!, siteId, view, options),
        );
      },
    );
  for (const light of lights)
    app.get(
      `/updates${url}${light ? '/light' : ''}`,
      {
        config: { right: 'read-config' },
        schema: routeSchema(
          doc,
          { updates: true, light },
          { querystring: SiteUpdatesQuery },
          errors,
        ),
      },
      async function readSiteViewUpdates(request, reply) {
        const { siteId, startDate } = request.query;
        const options = { light, startDate, ...httpOptions(request.headers, reply) };
        return replyWith(
          reply,
          await config.siteView(request.db, request.access!, siteId, view, options),
        );
      },
    );
}

/** What a whole-site view takes from the request and reply: its serializer and Accept-Encoding. */
const httpOptions = (headers: { 'accept-encoding'?: string }, reply: FastifyReply) => ({
  serialize: (v: unknown) => reply.serialize(v) as string,
  acceptEncoding: headers['accept-encoding'],
});

/** An /updates view is serialized by the route; a whole one is sent as cached, gzipped when asked. */
function replyWith(reply: FastifyReply, answer: SiteViewAnswer) {
  if ('value' in answer) return answer.value;
  reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
  if (answer.encoding === 'gzip') reply.header('content-encoding', 'gzip');
  return reply.send(answer.body);
}
