import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { KINDS, METER, PUMP, SENSOR, TANK } from './fixtures.js';
import {
  csvOf,
  DOWNLOAD_URLS,
  downloader,
  LOAD_URL,
  loadBody,
  parseCsv,
  RAW_URL,
  storeLogs,
  type Kind,
} from './download-fixtures.js';

// The download routes answer CSV when the Accept header prefers it (contract 6), with the JSON
// field names in the contract's order; and the OpenAPI document says so.

const FIELDS: Record<Kind | 'raw', string[]> = {
  sensor: ['sensorID', 'start', 'end', 'count', 'min', 'max', 'avg', 'first', 'last'],
  meter: [
    'flowMeterID',
    'start',
    'end',
    'count',
    'volume',
    'lastTotalVolume',
    'avgFlowRate',
    'maxFlowRate',
    'avgPressure',
  ],
  pump: [
    'sitePumpID',
    'start',
    'end',
    'count',
    'runningPercent',
    'avgFrequency',
    'avgPressure',
    'maxPressure',
    'lastStatusID',
    'lastStatus',
  ],
  tank: [
    'siteTankGroupID',
    'start',
    'end',
    'count',
    'minEntryTankLevel',
    'maxEntryTankLevel',
    'avgEntryTankLevel',
    'minExitTankLevel',
    'maxExitTankLevel',
    'avgExitTankLevel',
    'lastTotalVolume',
  ],
  raw: ['sensorID', 'value', 'timestamp'],
};
const DTO: Record<string, [request: string, element: string]> = {
  [LOAD_URL.sensor]: ['SensorLogsLoadDto', 'SensorLogSummaryDto'],
  [LOAD_URL.meter]: ['MeterLogsLoadDto', 'MeterLogSummaryDto'],
  [LOAD_URL.pump]: ['PumpLogsLoadDto', 'PumpLogSummaryDto'],
  [LOAD_URL.tank]: ['TankLogsLoadDto', 'TankLogSummaryDto'],
  [RAW_URL]: ['SensorLogsRawDto', 'SensorRawLogDto'],
};
const t = (hm: string) => `2026-04-01T${hm}:00Z`;
const STATUS = 'Stopped, "manual"\r\nsee log';

describeEachBackend('telemetry download as CSV', (backend) => {
  let ctx: TestContext;
  let get: ReturnType<typeof downloader>;
  /** Each route's request, by URL, with the field list of its records. */
  const requests: [url: string, body: unknown, fields: string[]][] = [
    ...KINDS.map(
      (k) =>
        [
          LOAD_URL[k],
          loadBody(
            k,
            [{ sensor: SENSOR, meter: METER, pump: PUMP, tank: TANK }[k]],
            t('00:00'),
            t('02:00'),
          ),
          FIELDS[k],
        ] as [string, unknown, string[]],
    ),
    [RAW_URL, { sensorId: SENSOR, start: t('00:00'), end: t('02:00') }, FIELDS.raw],
  ];
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    const token = await ctx.token('*');
    get = downloader(ctx, token);
    // Statistics that no sample carries, to see null become an empty field; a status that needs quoting.
    await storeLogs(ctx, token, 'sensor', [
      { sensorID: SENSOR, timestamp: t('00:10'), value: 1.5 },
      { sensorID: SENSOR, timestamp: t('00:20'), value: 2.25 },
      { sensorID: SENSOR, timestamp: t('01:10'), value: 1 / 3 },
    ]);
    await storeLogs(ctx, token, 'meter', [
      { flowMeterID: METER, timestamp: t('00:10'), totalVolume: 10 },
      { flowMeterID: METER, timestamp: t('01:10'), flowRate: 5 },
    ]);
    await storeLogs(ctx, token, 'pump', [
      { sitePumpID: PUMP, timestamp: t('00:10'), running: true, statusID: 7, status: STATUS },
      { sitePumpID: PUMP, timestamp: t('01:10'), pressure: 3 },
    ]);
    await storeLogs(ctx, token, 'tank', [
      { siteTankGroupID: TANK, timestamp: t('00:10'), entryTankLevel: 1 },
      { siteTankGroupID: TANK, timestamp: t('01:10'), exitTankLevel: 2 },
    ]);
  });
  afterAll(async () => ctx?.close());

  it('answers text/csv on every route: header of the fields in order, CRLF lines, null as empty, the JSON values', async () => {
    for (const [url, body, fields] of requests) {
      const json = await get(url, body);
      expect(json.status, url).toBe(200);
      expect(json.body.length, url).toBe(url === RAW_URL ? 3 : 2);
      for (const e of json.body) expect(Object.keys(e), url).toEqual(fields);
      const csv = await get(url, body, { accept: 'text/csv' });
      expect(csv.status, url).toBe(200);
      expect(csv.type, url).toMatch(/^text\/csv/);
      expect(csv.text.startsWith(`${fields.join(',')}\r\n`), url).toBe(true);
      expect(parseCsv(csv.text), url).toEqual(csvOf(json.body, fields));
    }
    // Spot checks of the form: an empty field for null, the RFC 4180 quoting of the status.
    const pump = await get(LOAD_URL.pump, requests[2][1], { accept: 'text/csv' });
    expect(pump.text).toContain(`,100,,,,7,"Stopped, ""manual""\r\nsee log"\r\n`);
    const sensor = parseCsv(
      (await get(LOAD_URL.sensor, requests[0][1], { accept: 'text/csv' })).text,
    );
    expect(sensor[1]).toEqual([
      '10100',
      '2026-04-01T00:00:00.000Z',
      '2026-04-01T01:00:00.000Z',
      '2',
      '1.5',
      '2.25',
      '1.875',
      '1.5',
      '2.25',
    ]);
    expect(Number(sensor[2][6])).toBe(1 / 3);
  });

  it('answers CSV only when the Accept header prefers it', async () => {
    const cases: [string | undefined, 'json' | 'csv'][] = [
      [undefined, 'json'],
      ['application/json', 'json'],
      ['*/*', 'json'],
      ['text/csv', 'csv'],
      ['text/csv;q=0.5, application/json', 'json'],
      ['application/json;q=0.5, text/csv', 'csv'],
      ['text/*', 'csv'],
      ['text/html', 'json'],
    ];
    for (const [url, body, fields] of requests)
      for (const [accept, format] of cases) {
        const a = await get(url, body, accept === undefined ? {} : { accept });
        expect(a.status, `${url} ${accept}`).toBe(200);
        if (format === 'json') {
          expect(a.type, `${url} ${accept}`).toMatch(/^application\/json/);
          expect(a.body.length).toBe(url === RAW_URL ? 3 : 2);
        } else {
          expect(a.type, `${url} ${accept}`).toMatch(/^text\/csv/);
          expect(parseCsv(a.text)[0]).toEqual(fields);
        }
      }
  });

  it('writes an answer of several pages, the first of them empty, as one valid JSON array and one CSV table', async () => {
    await storeLogs(ctx, await ctx.token('*'), 'sensor', [
      { sensorID: 10112, timestamp: '2026-06-05T10:00:00Z', value: 7 },
      { sensorID: 10109, timestamp: '2026-06-05T11:00:00Z', value: 8 },
    ]);
    // 10 ids x 7,202 hours: the engine reads 6 ids a page, so the ids with logs come on the second page.
    const ids = [10112, 10101, 10104, 10105, 10106, 10107, 10108, 10109, 10110, 10111];
    const body = loadBody('sensor', ids, '2026-01-01T00:00:00Z', '2026-10-28T00:00:00Z');
    const json = await get(LOAD_URL.sensor, body);
    expect(json.status).toBe(200);
    expect(json.body).toEqual([
      {
        sensorID: 10109,
        start: '2026-06-05T11:00:00.000Z',
        end: '2026-06-05T12:00:00.000Z',
        count: 1,
        min: 8,
        max: 8,
        avg: 8,
        first: 8,
        last: 8,
      },
      {
        sensorID: 10112,
        start: '2026-06-05T10:00:00.000Z',
        end: '2026-06-05T11:00:00.000Z',
        count: 1,
        min: 7,
        max: 7,
        avg: 7,
        first: 7,
        last: 7,
      },
    ]);
    expect(parseCsv((await get(LOAD_URL.sensor, body, { accept: 'text/csv' })).text)).toEqual(
      csvOf(json.body, FIELDS.sensor),
    );
  });

  it('lists both media types on the 200 of each download route in the OpenAPI document, with an operationId', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ids = new Set<string>();
    for (const url of DOWNLOAD_URLS) {
      const op = doc.paths[url]?.post;
      expect(op, url).toBeDefined();
      expect(op.operationId, url).toMatch(/^[a-z][A-Za-z]+$/);
      ids.add(op.operationId);
      const ok = op.responses['200'];
      expect(Object.keys(ok.content).sort(), url).toEqual(['application/json', 'text/csv']);
      expect(ok.content['application/json'].schema.type, url).toBe('array');
      // DTOs are named components of the document (src/plugins/openapi-components.ts).
      expect(ok.content['application/json'].schema.items.$ref, url).toBe(
        `#/components/schemas/${DTO[url][1]}`,
      );
      expect(Object.keys(doc.components.schemas[DTO[url][1]].properties), url).toEqual(
        url === RAW_URL ? FIELDS.raw : FIELDS[KINDS.find((k) => LOAD_URL[k] === url)!],
      );
      expect(op.requestBody.content['application/json'].schema.$ref, url).toBe(
        `#/components/schemas/${DTO[url][0]}`,
      );
      for (const status of ['400', '401', '403', '404', '429'])
        expect(op.responses[status], `${url} ${status}`).toBeDefined();
    }
    expect(ids.size).toBe(DOWNLOAD_URLS.length);
  });
});
