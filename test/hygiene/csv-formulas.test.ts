import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { PUMP, SENSOR } from '../telemetry/fixtures.js';
import {
  downloader,
  LOAD_URL,
  loadBody,
  parseCsv,
  RAW_URL,
  storeLogs,
} from '../telemetry/download-fixtures.js';

// CSV formula injection (CWE-1236): a text field that begins with = + - @, a tab or a carriage
// return (or their full-width forms) runs as a formula when the CSV is opened in a spreadsheet.
// Every CSV the service writes prefixes such a text field with a single quote, and quotes a text
// field holding a line break (a lone CR or LF would start a new row, beginning with what follows)
// or a semicolon (the list separator of many locales). Numbers stay numbers (a negative one
// included) and JSON answers carry the values as they are.

const TICKETS = '/v1/transactions/logs/load';
const INTERPOLATED = '/v1/sensors/logs/interpolated';
const PLOT = '/v1/sensors/logs/plot';
const KPIS = '/v1/alarms/kpis';
/** Every route that can answer text/csv, and the case of this file that covers it. */
const COVERED = [TICKETS, ...Object.values(LOAD_URL), RAW_URL, INTERPOLATED, PLOT, KPIS].sort();
const t = (hm: string) => `2026-05-01T${hm}:00Z`;

describeEachBackend('CSV downloads neutralise formulas', (backend) => {
  let ctx: TestContext;
  let get: ReturnType<typeof downloader>;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    get = downloader(ctx, await ctx.token('*', { cameraIds: '*' }));
  });
  afterAll(async () => ctx?.close());

  it('covers every route that answers text/csv', async () => {
    const doc = ctx.app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, any> }>>;
    };
    const csv = Object.entries(doc.paths)
      .filter(([, ops]) =>
        Object.values(ops).some((op) => op.responses?.['200']?.content?.['text/csv']),
      )
      .map(([path]) => path)
      .sort();
    expect(csv).toEqual(COVERED);
  });

  it('ticket logs: text fields that would run as formulas are prefixed, a negative volume is not; JSON as stored', async () => {
    const ticket = {
      TransactionID: 29_001,
      TicketNumber: 7,
      SiteID: 1,
      TransactionDate: '2019-06-01T00:00:00Z',
      HaulerCompany: '@SUM(1+1)*cmd|"/C calc"!A0',
      DriverName: '+1+2',
      TruckNumber: '-2+3',
      FluidType: '\tbrine',
      Volume: -3.5,
      VolumeUnits: '\r=1',
      Notes: '=HYPERLINK("http://x.example","click")',
    };
    const second = {
      TransactionID: 29_002,
      TicketNumber: 8,
      SiteID: 1,
      TransactionDate: '2019-06-02T00:00:00Z',
      HaulerCompany: '＝1+1',
      DriverName: 'A. Smith; =1+1',
      TruckNumber: 'T-12',
      FluidType: 'brine\n=1+1',
      VolumeUnits: 'bbl\r@x',
      Notes: 'plain, "quoted"',
    };
    await importDocument(ctx.db, { transactions: [ticket, second] });
    const body = { siteIds: [1], start: '2019-01-01T00:00:00Z', end: '2019-12-01T00:00:00Z' };
    const csv = await get(TICKETS, body, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    const lines = csv.text.split('\r\n');
    expect(lines[1]).toBe(
      `29001,7,1,Pecos SWD 1,Permian Water Services,2019-06-01T00:00:00.000Z,"'@SUM(1+1)*cmd|""/C calc""!A0",'+1+2,'-2+3,'\tbrine,-3.5,"'\r=1","'=HYPERLINK(""http://x.example"",""click"")",`,
    );
    expect(lines[2]).toBe(
      `29002,8,1,Pecos SWD 1,Permian Water Services,2019-06-02T00:00:00.000Z,'＝1+1,"A. Smith; =1+1",T-12,"brine\n=1+1",,"bbl\r@x","plain, ""quoted""",`,
    );
    const json = await get(TICKETS, body);
    expect(json.status).toBe(200);
    expect(json.body).toHaveLength(2);
    const stored = ({ TransactionDate: _, ...fields }: Record<string, unknown>) => fields;
    expect(json.body[0]).toMatchObject(stored(ticket));
    expect(json.body[1]).toMatchObject(stored(second));
  });

  it('pump summaries: a status that would run as a formula is prefixed, negative numbers are not; JSON as stored', async () => {
    const token = await ctx.token('*');
    await storeLogs(ctx, token, 'pump', [
      { sitePumpID: PUMP, timestamp: t('00:10'), running: true, pressure: -3.5, status: '-1+1' },
      {
        sitePumpID: PUMP,
        timestamp: t('01:10'),
        running: false,
        pressure: -0.25,
        statusID: 4,
        status: '@cmd;x',
      },
    ]);
    const body = loadBody('pump', [PUMP], t('00:00'), t('02:00'));
    const csv = await get(LOAD_URL.pump, body, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n').slice(1, 3)).toEqual([
      `${PUMP},2026-05-01T00:00:00.000Z,2026-05-01T01:00:00.000Z,1,100,,-3.5,-3.5,,'-1+1`,
      `${PUMP},2026-05-01T01:00:00.000Z,2026-05-01T02:00:00.000Z,1,0,,-0.25,-0.25,4,"'@cmd;x"`,
    ]);
    const json = await get(LOAD_URL.pump, body);
    expect(json.body.map((e: any) => [e.avgPressure, e.lastStatus])).toEqual([
      [-3.5, '-1+1'],
      [-0.25, '@cmd;x'],
    ]);
  });

  it('sensor summaries and raw logs (numbers only): negative values stay numbers', async () => {
    const token = await ctx.token('*');
    await storeLogs(ctx, token, 'sensor', [
      { sensorID: SENSOR, timestamp: t('00:10'), value: -3.5 },
      { sensorID: SENSOR, timestamp: t('00:20'), value: -1e-7 },
    ]);
    const summary = await get(
      LOAD_URL.sensor,
      loadBody('sensor', [SENSOR], t('00:00'), t('01:00')),
      { accept: 'text/csv' },
    );
    expect(parseCsv(summary.text)[1]).toEqual([
      String(SENSOR),
      '2026-05-01T00:00:00.000Z',
      '2026-05-01T01:00:00.000Z',
      '2',
      '-3.5',
      '-1e-07',
      String((-3.5 + -1e-7) / 2),
      '-3.5',
      '-1e-07',
    ]);
    const raw = await get(
      RAW_URL,
      { sensorId: SENSOR, start: t('00:00'), end: t('01:00') },
      { accept: 'text/csv' },
    );
    expect(raw.text).toBe(
      `sensorID,value,timestamp\r\n${SENSOR},-3.5,2026-05-01T00:10:00.000Z\r\n${SENSOR},-1e-07,2026-05-01T00:20:00.000Z\r\n`,
    );
    // Historian routes: numbers only too.
    const interpolated = await get(
      INTERPOLATED,
      { sensorIds: [SENSOR], times: [t('00:10'), t('00:15')] },
      { accept: 'text/csv' },
    );
    expect(interpolated.text).toBe(
      `sensorID,timestamp,value\r\n${SENSOR},2026-05-01T00:10:00.000Z,-3.5\r\n${SENSOR},2026-05-01T00:15:00.000Z,${-3.5 + ((-1e-7 - -3.5) * 300_000) / 600_000}\r\n`,
    );
    const plot = await get(
      PLOT,
      { sensorId: SENSOR, start: t('00:00'), end: t('01:00'), intervals: 1 },
      { accept: 'text/csv' },
    );
    expect(plot.text).toBe(
      `sensorID,timestamp,value\r\n${SENSOR},2026-05-01T00:10:00.000Z,-3.5\r\n${SENSOR},2026-05-01T00:20:00.000Z,-1e-7\r\n`,
    );
  });

  it('alarm performance: an alarm type that would run as a formula stays inside a key field that cannot', async () => {
    await ctx.db.query(
      `INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen, raised_at)
       VALUES (1, '=HYPERLINK("http://x.example")', 'major', 'm', $1, $1, $1)`,
      [t('00:10')],
    );
    const res = await get(
      KPIS,
      { siteIds: [1], start: t('00:00'), end: t('01:00') },
      { accept: 'text/csv' },
    );
    const [header, row] = parseCsv(res.text);
    expect(header.slice(-2)).toEqual(['TopAlarms', 'Chattering']);
    // A key field begins with its EquipmentTypeID, or ':' for a site alarm: never a formula.
    expect(row.slice(-2)).toEqual(['::=HYPERLINK("http://x.example")=1', '']);
  });
});
