import { KINDS, METER, PUMP, SENSOR, TANK, VALID } from '../telemetry/fixtures.js';
import type { SiteOne } from '../hygiene/routes-fixture.js';

// The requests test/docs/prism.test.ts sends through Prism's validation proxy: one valid request per
// operationId of the served document (path parameters, query and body; the path itself comes from
// the document), and the main refusals of a representative set. Every id names demo data of site 1
// (src/provisioning/demo.ts; ids are site * 10000 + n) or what test/hygiene/routes-fixture.ts
// siteOne() finds there. An operation of the document without an entry here fails the test.

/** Whose bearer token the request carries. */
export type Caller =
  | 'owner' // admin of every site and camera
  | 'foreign' // admin of site 2 only: site 1's things are out of its reach
  | 'short' // the owner, with a token that expires in about two seconds (the stream then ends)
  | 'viewer' // every site and camera, the role viewer (reads only)
  | 'edge' // every site and camera, the role edge (uploads, alarms, configuration reads)
  | 'none';

export interface Example {
  params?: Record<string, string | number>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  headers?: Record<string, string>;
  caller?: Caller;
  /** The status the service must answer; any 2xx when not given. */
  status?: number;
}

export interface Refusal extends Example {
  operationId: string;
  what: string;
  status: number;
  /** The request breaks the document on purpose (a 400 case, or no token): its request violations are expected. */
  badInput?: boolean;
}

const TS = '2026-11-01T00:00:00Z';
const RANGE = { start: '2026-10-01T00:00:00Z', end: '2026-11-20T00:00:00Z' };
/** The demo's tickets and their edits fall in the days before it was generated (now). */
const RECENT = {
  start: new Date(Date.now() - 20 * 86_400_000).toISOString(),
  end: new Date(Date.now() + 86_400_000).toISOString(),
};
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
const minute = (n: number) =>
  `2026-11-01T${String(Math.floor(n / 60) % 24).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}:00Z`;

/** The configuration operations: four kinds by id, five site lists, the whole site; each whole or light, current or changed. */
function configExamples(): Record<string, Example> {
  const out: Record<string, Example> = {};
  const since = { startDate: '2000-01-01T00:00:00Z' };
  const byId = { sensor: ['sensorId', SENSOR], meter: ['meterId', METER], pump: ['pumpId', PUMP] };
  for (const [kind, [param, id]] of Object.entries({ ...byId, tank: ['tankGroupId', TANK] })) {
    const params = { [param as string]: id };
    const K = cap(kind);
    out[`get${K}Registers`] = { params };
    out[`get${K}RegistersLight`] = { params };
    out[`get${K}RegisterUpdates`] = { params, query: since };
    out[`get${K}RegisterUpdatesLight`] = { params, query: since };
  }
  const site = { siteId: 1 };
  for (const list of ['Sensors', 'Meters', 'Pumps', 'Tanks', 'Actuators']) {
    const one = list.slice(0, -1);
    out[`getSite${list}`] = { query: site };
    out[`getSite${list}Light`] = { query: site };
    out[`getSite${one}Updates`] = { query: { ...site, ...since } };
    out[`getSite${one}UpdatesLight`] = { query: { ...site, ...since } };
  }
  out.getSiteConfig = { query: site };
  out.getSiteConfigLight = { query: site };
  out.getSiteConfigUpdates = { query: { ...site, ...since } };
  out.getSiteConfigUpdatesLight = { query: { ...site, ...since } };
  out.getSiteCompactConfig = { query: site };
  out.getSiteCompactConfigUpdates = { query: { ...site, ...since } };
  return out;
}

/** One valid request per operationId; n makes each call's data its own (upload times, client ids). */
export function validExamples(one: SiteOne, n: number): Record<string, Example> {
  const uploads: Record<string, Example> = {};
  for (const kind of KINDS) {
    const K = cap(kind);
    const record = () => VALID[kind](minute(n));
    uploads[`upload${K}Log`] = { body: record(), status: 201 };
    uploads[`upload${K}LogBatch`] = { body: [record()], status: 201 };
    uploads[`upload${K}Reading`] = { body: record() };
    uploads[`upload${K}ReadingBatch`] = { body: { readings: [record()] } };
  }
  return {
    getHealth: { caller: 'none' },
    issueToken: {
      caller: 'none',
      body: { clientId: 'prism-login', clientSecret: 'secret-123456' },
    },
    getOpenApiDocument: { caller: 'none' },
    listSites: { query: { page: 1, perPage: 50, dataType: 'additional' } },
    ...configExamples(),
    ...uploads,
    uploadGenericLogs: { body: [VALID.sensor(TS), VALID.pump(minute(n + 7))], status: 201 },
    uploadGenericReadings: { body: { readings: [VALID.meter(TS), VALID.tank(TS)] } },
    loadSensorSummaries: { body: { sensorIds: [SENSOR], ...RANGE } },
    loadMeterSummaries: { body: { meterIds: [METER], ...RANGE } },
    loadPumpSummaries: { body: { pumpIds: [PUMP], ...RANGE } },
    loadTankSummaries: { body: { tankGroupIds: [TANK], ...RANGE } },
    loadSensorRawLogs: { body: { sensorId: SENSOR, ...RANGE } },
    loadSensorInterpolatedValues: { body: { sensorIds: [SENSOR], ...RANGE, interval: '1h' } },
    loadSensorPlotValues: { body: { sensorId: SENSOR, ...RANGE, intervals: 100 } },
    sendAlarm: {
      body: { siteId: 1, sensorID: SENSOR, alarmType: 'High', message: 'm', timestamp: TS },
      status: 201,
    },
    sendAlarmBatch: {
      body: {
        siteId: 1,
        alarms: [{ sitePumpID: PUMP, alarmType: 'Trip', message: 'm', timestamp: TS }],
      },
    },
    resolveAlarms: { body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId }] } },
    listActiveAlarms: { body: { siteIds: [1] } },
    acknowledgeAlarms: {
      body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId, note: 'seen' }] },
    },
    shelveAlarms: { body: { siteId: 1, minutes: 30, alarms: [{ SiteAlarmLogID: one.alarmId }] } },
    unshelveAlarms: { body: { siteId: 1, alarms: [{ SiteAlarmLogID: one.alarmId }] } },
    listAlarms: { body: { siteIds: [1], ...RECENT, page: 1, perPage: 50 } },
    loadAlarmKpis: { body: { siteIds: [1], ...RECENT, series: '1h' } },
    listAlarmJournal: {
      body: { siteIds: [1], ...RECENT, SiteAlarmLogID: one.alarmId, page: 1, perPage: 50 },
    },
    listAlarmRules: { query: { siteId: 1 } },
    loadTransactionLogs: { body: { siteIds: [1], ...RECENT, motionCap: true } },
    loadTransactionChangeLogs: { body: { ...RECENT, filters: { siteIds: [1] } } },
    downloadTicketImages: { body: { uuids: [one.ticketUuid] } },
    downloadMotionCaptureImages: { body: { uuids: [one.motionUuid] } },
    getTicketImage: { params: { uuid: one.ticketUuid } },
    getMotionCaptureImage: { params: { uuid: one.motionUuid } },
    showMe: {},
    listClients: { query: { page: 1, perPage: 100 } },
    createClient: { body: { clientId: `prism-${n}`, siteIds: [1] }, status: 201 },
    updateClient: { params: { clientId: one.clientId }, body: { cameraIds: [] } },
    rotateClientSecret: { params: { clientId: one.clientId } },
    importProvisioningDocument: {
      body: { cameras: [{ CameraID: 10799, SiteID: 1, Name: 'Gate 9' }] },
    },
    // The proxy reads an answer to its end before it checks it: a token about to expire ends the stream.
    streamEvents: {
      caller: 'short',
      query: { siteIds: '1' },
      headers: { accept: 'text/event-stream' },
    },
  };
}

/** More valid requests, for answers the first request of an operation does not show (other branches, empty lists, repeats). */
export function moreExamples(): (Example & { operationId: string; what: string })[] {
  const future = { startDate: '2099-01-01T00:00:00Z' };
  return [
    { operationId: 'listSites', what: 'basic', query: { page: 1, perPage: 50 } },
    {
      operationId: 'listSites',
      what: 'filtered and sorted, past the last page',
      query: {
        page: 9,
        perPage: 1,
        name: 'swd',
        active: true,
        sortBy: 'Name',
        sortDirection: 'DESC',
      },
    },
    { operationId: 'getSiteConfig', what: 'site 2', query: { siteId: 2 } },
    {
      operationId: 'getSiteConfigUpdates',
      what: 'nothing changed since',
      query: { siteId: 1, ...future },
    },
    {
      operationId: 'getSiteCompactConfigUpdates',
      what: 'nothing changed since',
      query: { siteId: 1, ...future },
    },
    {
      operationId: 'getMeterRegisterUpdates',
      what: 'nothing changed since',
      params: { meterId: METER },
      query: future,
    },
    {
      operationId: 'getSensorRegisterUpdatesLight',
      what: 'nothing changed since',
      params: { sensorId: SENSOR },
      query: future,
    },
    ...['15m', '1d', 'all'].map((interval) => ({
      operationId: 'loadPumpSummaries',
      what: `interval ${interval}`,
      body: { pumpIds: [PUMP], ...RANGE, interval },
    })),
    {
      operationId: 'loadSensorSummaries',
      what: 'nothing in the range',
      body: { sensorIds: [SENSOR], start: '2001-01-01T00:00:00Z', end: '2001-02-01T00:00:00Z' },
    },
    {
      operationId: 'sendAlarm',
      what: 'the same alarm again (duplicate)',
      body: { siteId: 1, sensorID: SENSOR, alarmType: 'High', message: 'm', timestamp: TS },
    },
    {
      operationId: 'sendAlarm',
      what: 'with a value, of a site',
      body: { siteId: 1, alarmType: 'Leak', message: 'water', value: 3.5, timestamp: TS },
      status: 201,
    },
    {
      operationId: 'loadTransactionLogs',
      what: 'without motionCap',
      body: { siteIds: [1, 2], ...RECENT },
    },
    {
      operationId: 'loadTransactionChangeLogs',
      what: 'every site',
      body: RECENT,
    },
    {
      operationId: 'createClient',
      what: 'admin of every site, own secret',
      body: {
        clientId: 'prism-admin',
        clientSecret: 'a-secret-of-prism-1234',
        siteIds: '*',
        cameraIds: '*',
        admin: true,
      },
      status: 201,
    },
    { operationId: 'listClients', what: 'past the last page', query: { page: 50, perPage: 10 } },
    {
      operationId: 'updateClient',
      what: 'disabled',
      params: { clientId: 'prism-admin' },
      body: { disabled: true, siteIds: [1, 2] },
    },
    {
      operationId: 'streamEvents',
      what: 'every site of the client',
      caller: 'short',
      headers: { accept: 'text/event-stream' },
    },
  ];
}

/**
 * The main refusals: 400 (bad input), 401 (no token), 403 (site 1 asked by a client of site 2), 404
 * (unknown id); and 406 and 415, each once.
 */
export function refusals(one: SiteOne): Refusal[] {
  const upload = VALID.sensor(TS);
  return [
    // 400
    {
      operationId: 'issueToken',
      what: 'no secret',
      caller: 'none',
      body: { clientId: 'x' },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'getSensorRegisters',
      what: 'id not a number',
      params: { sensorId: 'abc' },
      status: 400,
      badInput: true,
    },
    { operationId: 'getSiteConfig', what: 'no siteId', status: 400, badInput: true },
    {
      operationId: 'getSiteSensorUpdates',
      what: 'date without a time',
      query: { siteId: 1, startDate: '2026-01-01' },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'uploadSensorLog',
      what: 'no sensorID',
      body: { value: 1, timestamp: TS },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'loadSensorSummaries',
      what: 'no sensor ids',
      body: { sensorIds: [], ...RANGE },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'sendAlarm',
      what: 'no message',
      body: { siteId: 1, alarmType: 'High', timestamp: TS },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'createClient',
      what: 'client id with a space',
      body: { clientId: 'a b', siteIds: [1] },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'streamEvents',
      what: 'malformed siteIds',
      query: { siteIds: 'x' },
      headers: { accept: 'text/event-stream' },
      status: 400,
      badInput: true,
    },
    {
      operationId: 'streamEvents',
      what: 'Accept refuses text/event-stream',
      headers: { accept: 'application/json' },
      status: 406,
    },
    {
      operationId: 'uploadSensorLog',
      what: 'body not JSON',
      body: 'sensorID=1',
      headers: { 'content-type': 'text/plain' },
      status: 415,
      badInput: true,
    },
    // 401
    {
      operationId: 'issueToken',
      what: 'wrong secret',
      caller: 'none',
      body: { clientId: 'prism-login', clientSecret: 'wrong-secret' },
      status: 401,
    },
    ...(
      [
        ['listSites', { query: { page: 1, perPage: 10 } }],
        ['getSensorRegisters', { params: { sensorId: SENSOR } }],
        ['getSiteConfig', { query: { siteId: 1 } }],
        ['uploadSensorLog', { body: upload }],
        ['loadSensorRawLogs', { body: { sensorId: SENSOR, ...RANGE } }],
        ['loadSensorPlotValues', { body: { sensorId: SENSOR, ...RANGE, intervals: 10 } }],
        ['getTicketImage', { params: { uuid: one.ticketUuid } }],
        ['listClients', {}],
        ['streamEvents', { headers: { accept: 'text/event-stream' } }],
      ] as [string, Example][]
    ).map(([operationId, ex]) => ({
      operationId,
      what: 'no token',
      ...ex,
      caller: 'none' as const,
      status: 401,
      badInput: true,
    })),
    // 403
    ...(
      [
        ['getSensorRegisters', { params: { sensorId: SENSOR } }],
        ['getSiteConfigLight', { query: { siteId: 1 } }],
        ['uploadSensorLog', { body: upload }],
        ['loadSensorSummaries', { body: { sensorIds: [SENSOR], ...RANGE } }],
        ['sendAlarm', { body: { siteId: 1, alarmType: 'High', message: 'm', timestamp: TS } }],
        ['loadTransactionLogs', { body: { siteIds: [1], ...RANGE } }],
        ['getTicketImage', { params: { uuid: one.ticketUuid } }],
        ['downloadMotionCaptureImages', { body: { uuids: [one.motionUuid] } }],
        ['updateClient', { params: { clientId: one.clientId }, body: { disabled: false } }],
        ['streamEvents', { query: { siteIds: '1' }, headers: { accept: 'text/event-stream' } }],
      ] as [string, Example][]
    ).map(([operationId, ex]) => ({
      operationId,
      what: 'site 1 asked by a client of site 2',
      ...ex,
      caller: 'foreign' as const,
      status: 403,
    })),
    // 403: the role lacks the right
    {
      operationId: 'uploadSensorLog',
      what: 'an upload by a viewer',
      body: upload,
      caller: 'viewer',
      status: 403,
    },
    {
      operationId: 'listSites',
      what: 'the sites asked by an edge',
      query: { page: 1, perPage: 5 },
      caller: 'edge',
      status: 403,
    },
    // 404
    ...(
      [
        ['getSensorRegisters', { params: { sensorId: 999_999 } }],
        ['getPumpRegisterUpdatesLight', { params: { pumpId: 999_999 }, query: { startDate: TS } }],
        ['getTankRegisters', { params: { tankGroupId: 999_999 } }],
        ['loadSensorRawLogs', { body: { sensorId: 999_999, ...RANGE } }],
        ['loadSensorPlotValues', { body: { sensorId: 999_999, ...RANGE, intervals: 10 } }],
        [
          'loadSensorInterpolatedValues',
          { body: { sensorIds: [999_999], times: ['2026-11-01T00:00:00Z'] } },
        ],
        ['getTicketImage', { params: { uuid: UNKNOWN_UUID } }],
        ['updateClient', { params: { clientId: 'no-such-client' }, body: { disabled: true } }],
        ['rotateClientSecret', { params: { clientId: 'no-such-client' } }],
      ] as [string, Example][]
    ).map(([operationId, ex]) => ({ operationId, what: 'unknown id', ...ex, status: 404 })),
  ];
}
