import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyTypebox } from '../../../http.js';
import { requireEquipment } from '../../../auth/access.js';
import { badRequest, forbidden, notFound } from '../../../errors.js';
import { securedErrors } from '../../../schemas/common.js';
import { parseTime } from '../../../time.js';
import { changed, changedRegisters, ConfigIndex, type Since } from './assemble.js';
import { acceptsGzip, CachedBody, ConfigCache } from './cache.js';
import { loadEquipment, loadSensorRegisters, loadSite, siteFingerprint, type EquipmentKind } from './repository.js';
import { CompactSiteConfig, forSerialization, FULL, idParams, LIGHT, SiteQuery, SiteUpdatesQuery, UpdatesQuery } from './schema.js';
import { actuatorEntries, compactConfig, equipmentConfig, equipmentRegisters, sensorConfig, Shaper, siteConfig } from './shape.js';

// Interface §4.3: 11 paths, each with its /updates twin, and a /light variant of each but the two
// compact ones: 42 routes, generated from the two tables below.

type Dtos = typeof FULL;

interface ByIdPath {
  path: string;
  param: string;
  kind: 'sensor' | EquipmentKind;
  what: string;
  response: (d: Dtos) => TSchema;
}

const BY_ID: ByIdPath[] = [
  { path: '/sensors', param: 'sensorId', kind: 'sensor', what: 'The registers a sensor reads', response: (d) => d.Registers },
  { path: '/meters', param: 'meterId', kind: 'meter', what: "A flow meter's role registers and sensor registers", response: (d) => d.MeterRegisters },
  { path: '/pumps', param: 'pumpId', kind: 'pump', what: "A pump's role registers and sensor registers", response: (d) => d.PumpRegisters },
  { path: '/tanks', param: 'tankGroupId', kind: 'tank', what: "A tank group's role registers and sensor registers", response: (d) => d.TankRegisters },
];

interface SitePath {
  path: string;
  what: string;
  light: boolean;
  response: (d: Dtos) => TSchema;
  build: (index: ConfigIndex, s: Shaper, since: Since) => unknown;
}

const equipmentPath = (kind: EquipmentKind, list: string, response: (d: Dtos) => TSchema): SitePath => ({
  path: `/site/${list}`,
  what: `The ${kind === 'tank' ? 'tank group' : kind === 'meter' ? 'flow meter' : kind}s of a site, each with its role and sensor registers`,
  light: true,
  response,
  build: (index, s, since) => index.equipmentEntries(kind, since).map((e) => equipmentConfig(e, s)),
});

const SITE: SitePath[] = [
  {
    path: '/site/sensors', what: 'The sensors of a site, each with its registers', light: true, response: (d) => d.SensorConfigs,
    build: (index, s, since) => index.sensorEntries(since).map((e) => sensorConfig(e, s)),
  },
  equipmentPath('meter', 'meters', (d) => d.MeterConfigs),
  equipmentPath('pump', 'pumps', (d) => d.PumpConfigs),
  equipmentPath('tank', 'tanks', (d) => d.TankConfigs),
  {
    path: '/site/actuators', what: 'The actuators of a site with their scalings, triggers and tank-group connections (always all of them)',
    light: true, response: (d) => d.ActuatorEntries, build: (index, s) => actuatorEntries(index.data.actuators, s),
  },
  { path: '/site', what: "A site's whole configuration", light: true, response: (d) => d.SiteConfig, build: siteConfig },
  {
    path: '/site/compact', what: "A site's whole configuration, registers once each and referred to by id", light: false,
    response: () => CompactSiteConfig, build: (index, _s, since) => compactConfig(index, since),
  },
];

const UPDATES_NOTE =
  'Updates: only equipment whose own record, registers (or their Modbus devices) or sensors changed at or after startDate; ' +
  'deleted registers and Delete actuators included; actuators always in full.';
const BY_ID_UPDATES_NOTE = 'Updates: only the registers that changed (themselves or their Modbus device) at or after startDate, possibly none.';
const LIGHT_NOTE = 'Light: null properties left out of every record, and the heavy actuator fields too.';

function routeSchema(
  def: { what: string; response: (d: Dtos) => TSchema },
  updatesNote: string,
  light: boolean,
  input: object,
  errors: Record<number, TSchema>,
) {
  return {
    tags: ['configuration'],
    summary: `${def.what}${updatesNote ? ', changed since startDate' : ''}${light ? ' (light)' : ''}`,
    description: [updatesNote, light ? LIGHT_NOTE : ''].filter(Boolean).join(' ') || undefined,
    ...input,
    response: { 200: forSerialization(def.response(light ? LIGHT : FULL)), ...errors },
  };
}

/** The updates cut-off in ms; 400 when startDate is not an ISO 8601 date-time. */
function cutOff(startDate: string): number {
  const t = parseTime(startDate);
  if (t === undefined) throw badRequest('startDate is not an ISO 8601 date-time', [{ path: '/startDate', message: 'must be an ISO 8601 date-time' }]);
  return t;
}

export async function configRoutes(app: FastifyTypebox): Promise<void> {
  const cache = new ConfigCache();
  const variants = (light: boolean) => [false, true].flatMap((updates) => (light ? [false, true] : [false]).map((l) => ({ updates, light: l })));

  for (const def of BY_ID)
    for (const { updates, light } of variants(true)) {
      const url = `${updates ? '/updates' : ''}${def.path}/:${def.param}${light ? '/light' : ''}`;
      const input = { params: idParams(def.param), ...(updates ? { querystring: UpdatesQuery } : {}) };
      app.get(
        url,
        { schema: routeSchema(def, updates ? BY_ID_UPDATES_NOTE : '', light, input, securedErrors(403, 404)) },
        async (request: FastifyRequest) => {
          const id = (request.params as Record<string, number>)[def.param];
          const since = updates ? cutOff((request.query as { startDate: string }).startDate) : null;
          const s = new Shaper(light);
          const siteId = (await requireEquipment(app.db, request.access!, def.kind, [id])).get(id)!;
          if (def.kind === 'sensor') {
            const registers = await loadSensorRegisters(app.db, id);
            return (since === null ? registers : registers.filter((r) => changed(r, since))).map(s.register);
          }
          const entry = new ConfigIndex(await loadEquipment(app.db, def.kind, id, siteId)).onlyEquipment(def.kind);
          if (!entry) throw notFound(`${def.kind} ${id} does not exist`);
          return equipmentRegisters(since === null ? entry : changedRegisters(entry, since), s);
        },
      );
    }

  for (const def of SITE)
    for (const { updates, light } of variants(def.light)) {
      const url = `${updates ? '/updates' : ''}${def.path}${light ? '/light' : ''}`;
      const input = { querystring: updates ? SiteUpdatesQuery : SiteQuery };
      app.get(
        url,
        { schema: routeSchema(def, updates ? UPDATES_NOTE : '', light, input, securedErrors(403)) },
        async (request: FastifyRequest, reply: FastifyReply) => {
          const q = request.query as { siteId: number; startDate?: string };
          const since = updates ? cutOff(q.startDate!) : null;
          request.access!.assertSites([q.siteId]);
          // A site that does not exist answers like one out of reach: the same 403 for every client.
          const noSite = () => forbidden(`no access to site ${q.siteId}`);
          const fingerprint = await cache.fingerprint(q.siteId, () => siteFingerprint(app.db, q.siteId));
          if (fingerprint === undefined) throw noSite();
          const key = `${url} ${q.siteId}`;
          let body = since === null ? cache.body(key, fingerprint) : undefined;
          if (body === undefined) {
            const index = await cache.index(q.siteId, fingerprint, () => loadSite(app.db, q.siteId));
            if (!index.data.site) throw noSite();
            const result = def.build(index, new Shaper(light), since);
            if (since !== null) return result;
            body = new CachedBody(Buffer.from(reply.serialize(result) as string));
            cache.setBody(key, fingerprint, body);
          }
          // Whole-site bodies run to megabytes: sent gzipped to a client that asks for it.
          reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
          if (!acceptsGzip(request.headers['accept-encoding'])) return reply.send(body.raw);
          return reply.header('content-encoding', 'gzip').send(await body.gzip());
        },
      );
    }
}
