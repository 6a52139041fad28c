import type { Database } from '../../src/db/index.js';
import type { TestContext } from '../helper.js';
import { KINDS, METER, PUMP, SENSOR, TANK, VALID } from '../telemetry/fixtures.js';

// One valid request per route of the app, aimed at site 1 (demo company 1), keyed by the route as
// the router holds it ("POST /v1/edge/logs/sensor"). The access-matrix and fuzz tests are built from
// the app's route table and fail for a route that has no entry here: a new route cannot escape them.

export interface RouteRequest {
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  body?: unknown;
  /** A stream: inject() cannot wait for its end, so only its refusals are checked here (test/stream covers the rest). */
  streams?: boolean;
}

/** Ids of site 1 the requests name (found in the database: images, an alarm, a client). */
export interface SiteOne {
  ticketUuid: string;
  motionUuid: string;
  alarmId: string;
  clientId: string;
}

/** Routes anyone may call without a token (the console's files too: it signs in through /token). */
export const PUBLIC = (url: string) =>
  url === '/health' ||
  url === '/token' ||
  url === '/openapi.json' ||
  url.startsWith('/docs') ||
  url === '/' ||
  url === '/console' ||
  url.startsWith('/console/');

const TS = '2026-11-01T00:00:00Z';
const RANGE = { start: '2026-10-01T00:00:00Z', end: '2026-11-20T00:00:00Z' };
const CONFIG_IDS: Record<string, number> = {
  sensorId: SENSOR,
  meterId: METER,
  pumpId: PUMP,
  tankGroupId: TANK,
};

export function routeRequests(one: SiteOne): Record<string, (n: number) => RouteRequest> {
  const table: Record<string, (n: number) => RouteRequest> = {
    'GET /v1/sites': () => ({
      method: 'GET',
      url: '/v1/sites?page=1&perPage=50&dataType=additional',
    }),
    'POST /v1/sensors/logs/load': () => ({
      method: 'POST',
      url: '/v1/sensors/logs/load',
      body: { sensorIds: [SENSOR], ...RANGE },
    }),
    'POST /v1/meters/logs/load': () => ({
      method: 'POST',
      url: '/v1/meters/logs/load',
      body: { meterIds: [METER], ...RANGE },
    }),
    'POST /v1/pumps/logs/load': () => ({
      method: 'POST',
      url: '/v1/pumps/logs/load',
      body: { pumpIds: [PUMP], ...RANGE },
    }),
    'POST /v1/tanks/logs/load': () => ({
      method: 'POST',
      url: '/v1/tanks/logs/load',
      body: { tankGroupIds: [TANK], ...RANGE },
    }),
    'POST /v1/sensors/logs/raw': () => ({
      method: 'POST',
      url: '/v1/sensors/logs/raw',
      body: { sensorId: SENSOR, ...RANGE },
    }),
    'POST /v1/sensors/logs/interpolated': () => ({
      method: 'POST',
      url: '/v1/sensors/logs/interpolated',
      body: { sensorIds: [SENSOR], ...RANGE, interval: '1d' },
    }),
    'POST /v1/sensors/logs/plot': () => ({
      method: 'POST',
      url: '/v1/sensors/logs/plot',
      body: { sensorId: SENSOR, ...RANGE, intervals: 100 },
    }),
    'POST /v1/edge/alarms': () => ({
      method: 'POST',
      url: '/v1/edge/alarms',
      body: { siteId: 1, sensorID: SENSOR, alarmType: 'High', message: 'm', timestamp: TS },
    }),
    'POST /v1/edge/alarms/batch': () => ({
      method: 'POST',
      url: '/v1/edge/alarms/batch',
      body: {
        siteId: 1,
        alarms: [{ sitePumpID: PUMP, alarmType: 'Trip', message: 'm', timestamp: TS }],
      },
    }),
    'POST /v1/edge/alarms/resolve': () => ({
      method: 'POST',
      url: '/v1/edge/alarms/resolve',
      body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId }] },
    }),
    'POST /v1/edge/alarms/active': () => ({
      method: 'POST',
      url: '/v1/edge/alarms/active',
      body: { siteIds: [1] },
    }),
    'POST /v1/alarms/acknowledge': () => ({
      method: 'POST',
      url: '/v1/alarms/acknowledge',
      body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId, note: 'seen' }] },
    }),
    'POST /v1/alarms/shelve': () => ({
      method: 'POST',
      url: '/v1/alarms/shelve',
      body: { siteId: 1, minutes: 30, alarms: [{ SiteAlarmLogID: one.alarmId }] },
    }),
    'POST /v1/alarms/unshelve': () => ({
      method: 'POST',
      url: '/v1/alarms/unshelve',
      body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId }] },
    }),
    'POST /v1/alarms/list': () => ({
      method: 'POST',
      url: '/v1/alarms/list',
      body: { siteIds: [1], ...RANGE, state: 'unacknowledged', page: 1, perPage: 50 },
    }),
    'POST /v1/alarms/kpis': () => ({
      method: 'POST',
      url: '/v1/alarms/kpis',
      body: { siteIds: [1], ...RANGE, series: '1d' },
    }),
    'POST /v1/alarms/journal': () => ({
      method: 'POST',
      url: '/v1/alarms/journal',
      body: { siteIds: [1], ...RANGE, SiteAlarmLogID: one.alarmId, page: 1, perPage: 50 },
    }),
    'GET /v1/alarms/rules': () => ({
      method: 'GET',
      url: '/v1/alarms/rules?siteId=1',
    }),
    'POST /v1/transactions/logs/load': () => ({
      method: 'POST',
      url: '/v1/transactions/logs/load',
      body: {
        siteIds: [1],
        start: '2000-01-01T00:00:00Z',
        end: '2000-12-31T00:00:00Z',
        motionCap: true,
      },
    }),
    'POST /v1/transactions/change-logs': () => ({
      method: 'POST',
      url: '/v1/transactions/change-logs',
      body: {
        start: '2026-10-01T00:00:00Z',
        end: '2026-11-30T00:00:00Z',
        filters: { siteIds: [1] },
      },
    }),
    'POST /v1/images/tickets': () => ({
      method: 'POST',
      url: '/v1/images/tickets',
      body: { uuids: [one.ticketUuid] },
    }),
    'POST /v1/images/motion-capture': () => ({
      method: 'POST',
      url: '/v1/images/motion-capture',
      body: { uuids: [one.motionUuid] },
    }),
    'GET /v1/images/tickets/:uuid': () => ({
      method: 'GET',
      url: `/v1/images/tickets/${one.ticketUuid}`,
    }),
    'GET /v1/images/motion-capture/:uuid': () => ({
      method: 'GET',
      url: `/v1/images/motion-capture/${one.motionUuid}`,
    }),
    'GET /v1/admin/clients': () => ({ method: 'GET', url: '/v1/admin/clients' }),
    'POST /v1/admin/clients': (n) => ({
      method: 'POST',
      url: '/v1/admin/clients',
      body: { clientId: `matrix-${n}`, siteIds: [1] },
    }),
    'PATCH /v1/admin/clients/:clientId': () => ({
      method: 'PATCH',
      url: `/v1/admin/clients/${one.clientId}`,
      body: { cameraIds: [] },
    }),
    'POST /v1/admin/clients/:clientId/secret': () => ({
      method: 'POST',
      url: `/v1/admin/clients/${one.clientId}/secret`,
    }),
    'POST /v1/admin/import': () => ({
      method: 'POST',
      url: '/v1/admin/import',
      body: { cameras: [{ CameraID: 10799, SiteID: 1, Name: 'Gate 9' }] },
    }),
    'GET /v1/stream': () => ({ method: 'GET', url: '/v1/stream?siteIds=1', streams: true }),
    'GET /v1/me': () => ({ method: 'GET', url: '/v1/me' }),
  };
  for (const kind of KINDS) {
    const minute = (n: number) =>
      `2026-11-01T${String(Math.floor(n / 60) % 24).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}:00Z`;
    table[`POST /v1/edge/logs/${kind}`] = (n) => ({
      method: 'POST',
      url: `/v1/edge/logs/${kind}`,
      body: VALID[kind](minute(n)),
    });
    table[`POST /v1/edge/logs/${kind}/batch`] = (n) => ({
      method: 'POST',
      url: `/v1/edge/logs/${kind}/batch`,
      body: [VALID[kind](minute(n))],
    });
    table[`POST /v1/edge/readings/${kind}`] = (n) => ({
      method: 'POST',
      url: `/v1/edge/readings/${kind}`,
      body: VALID[kind](minute(n)),
    });
    table[`POST /v1/edge/readings/${kind}/batch`] = (n) => ({
      method: 'POST',
      url: `/v1/edge/readings/${kind}/batch`,
      body: { readings: [VALID[kind](minute(n))] },
    });
  }
  table['POST /v1/edge/logs/generic'] = (n) => ({
    method: 'POST',
    url: '/v1/edge/logs/generic',
    body: [VALID.sensor(TS), VALID.pump(`2026-11-02T00:${String(n % 60).padStart(2, '0')}:00Z`)],
  });
  table['POST /v1/edge/readings/generic'] = () => ({
    method: 'POST',
    url: '/v1/edge/readings/generic',
    body: { readings: [VALID.meter(TS), VALID.tank(TS)] },
  });
  return table;
}

/** The request for a configuration route: by-id paths name site 1's equipment, site paths siteId=1. */
function configRequest(url: string): RouteRequest {
  const path = url.replace(/:(\w+)/g, (_, p: string) => String(CONFIG_IDS[p]));
  const query = [
    url.includes('/site') ? 'siteId=1' : '',
    url.includes('/updates/') ? 'startDate=2000-01-01T00:00:00Z' : '',
  ]
    .filter(Boolean)
    .join('&');
  return { method: 'GET', url: query ? `${path}?${query}` : path };
}

/** The request for a route, or undefined when the fixture has none (configuration routes follow their pattern). */
export function requestFor(
  table: Record<string, (n: number) => RouteRequest>,
  method: string,
  url: string,
  n: number,
): RouteRequest | undefined {
  if (method === 'GET' && url.startsWith('/v1/config/')) return configRequest(url);
  return table[`${method} ${url}`]?.(n);
}

/** Every route that needs a token, as [method, url], HEAD left out (it is GET without a body). */
export function securedRoutes(ctx: TestContext): [string, string][] {
  return ctx.app
    .routeTable()
    .filter((r) => !PUBLIC(r.url))
    .flatMap((r) =>
      r.methods.filter((m) => m !== 'HEAD').map((m) => [m, r.url] as [string, string]),
    );
}

/** Site 1's images, an open alarm there and a client of it: the ids the requests name. */
export async function siteOne(ctx: TestContext, adminToken: string): Promise<SiteOne> {
  const [ticket] = await ctx.db.query<{ uuid: string }>(
    `SELECT uuid::text AS uuid FROM images WHERE site_id = 1 AND kind = 'ticket' ORDER BY uuid LIMIT 1`,
  );
  const [motion] = await ctx.db.query<{ uuid: string }>(
    `SELECT uuid::text AS uuid FROM images WHERE site_id = 1 AND kind = 'motion' ORDER BY uuid LIMIT 1`,
  );
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/edge/alarms',
    headers: { authorization: `Bearer ${adminToken}` },
    payload: { siteId: 1, alarmType: 'Leak', message: 'seen', timestamp: TS },
  });
  if (res.statusCode !== 201 || !ticket || !motion)
    throw new Error(`site one fixture: ${res.statusCode} ${res.body}`);
  await ctx.token([1], { clientId: 'site-one-client' });
  return {
    ticketUuid: ticket.uuid,
    motionUuid: motion.uuid,
    alarmId: res.json().SiteAlarmLogID,
    clientId: 'site-one-client',
  };
}

/** Every table's rows, as one fingerprint per table: a refused request must leave all of them as they were. */
export async function fingerprint(db: Database): Promise<Record<string, string>> {
  // The rule evaluator's position in the stream of stored events moves on its own, in the background,
  // whatever the requests do: it is the service's bookkeeping, not anything a request stores.
  const tables = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
        AND table_name <> 'alarm_rule_cursor' ORDER BY 1`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await db.query<{ n: string; h: string }>(
      `SELECT count(*) AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM "${name}" t`,
    );
    out[name] = `${row.n}:${row.h}`;
  }
  return out;
}
