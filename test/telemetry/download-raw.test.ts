import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR, SENSOR_2 } from './fixtures.js';
import { rawSpans } from '../../src/telemetry/download/raw.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { downloader, parseCsv, RAW_URL, storeLogs } from './download-fixtures.js';

// POST /v1/sensors/logs/raw (contract 6): one sensor's logs in [start, end), ascending, over more
// than one page of the engine (5,000 rows), as JSON and as CSV.

const N = 45_000;
const BASE = Date.parse('2026-10-01T00:00:00Z');
/** Log i: 1.001 s apart, so the milliseconds differ from log to log (and across page edges). */
const at = (i: number) => new Date(BASE + i * 1001).toISOString();

describeEachBackend('telemetry raw download', (backend) => {
  let ctx: TestContext;
  let get: ReturnType<typeof downloader>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    const token = await ctx.token('*');
    get = downloader(ctx, token);
    // Uploaded in reverse order, so that the answer's order comes from the download, not the upload.
    const logs = Array.from({ length: N }, (_, k) => ({
      sensorID: SENSOR,
      timestamp: at(N - 1 - k),
      value: N - 1 - k,
    }));
    expect(await storeLogs(ctx, token, 'sensor', logs)).toBe(N);
    // Another sensor's logs in the same range are never part of the answer.
    await storeLogs(ctx, token, 'sensor', [
      { sensorID: SENSOR_2, timestamp: at(10), value: -1 },
      { sensorID: SENSOR_2, timestamp: at(30_000), value: -2 },
    ]);
  }, 600_000);
  afterAll(async () => ctx?.close());

  const raw = async (start: string, end: string, headers: Record<string, string> = {}) => {
    const a = await get(RAW_URL, { sensorId: SENSOR, start, end }, headers);
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    return a;
  };
  /** Checks that `rows` are logs from..to-1 in ascending order. */
  const expectLogs = (
    rows: { sensorID: number; value: number; timestamp: string }[],
    from: number,
    to: number,
  ) => {
    expect(rows.length).toBe(to - from);
    expect(rows[0]).toEqual({ sensorID: SENSOR, value: from, timestamp: at(from) });
    expect(rows[rows.length - 1]).toEqual({
      sensorID: SENSOR,
      value: to - 1,
      timestamp: at(to - 1),
    });
    const wrong = rows.findIndex(
      (r, k) => r.value !== from + k || r.timestamp !== at(from + k) || r.sensorID !== SENSOR,
    );
    expect(wrong, wrong >= 0 ? JSON.stringify(rows[wrong]) : '').toBe(-1);
  };

  it('answers every log in [start, end) in ascending order, across several pages', async () => {
    // start is the time of log 0 (included), end the time of the last log (excluded).
    const a = await raw(at(0), at(N - 1));
    expect(a.type).toMatch(/^application\/json/);
    expectLogs(a.body, 0, N - 1);
    // The same range written with an offset.
    const shifted = (i: number) =>
      new Date(BASE + i * 1001 + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expectLogs((await raw(shifted(1), shifted(N))).body, 1, N);
  });

  it('keeps exact bounds at page edges: one full page, a page and one, one log, none', async () => {
    expectLogs((await raw(at(5), at(20_005))).body, 5, 20_005);
    expectLogs((await raw(at(20_000), at(40_001))).body, 20_000, 40_001);
    expectLogs((await raw(at(7), at(8))).body, 7, 8);
    // A millisecond after log 7 up to log 8 itself: nothing.
    expect((await raw(new Date(BASE + 7 * 1001 + 1).toISOString(), at(8))).body).toEqual([]);
    expect((await raw('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')).body).toEqual([]);
  });

  it('answers the same logs as CSV: header, CRLF lines, the same values', async () => {
    const [from, to] = [19_990, 40_010];
    const json = (await raw(at(from), at(to))).body as {
      sensorID: number;
      value: number;
      timestamp: string;
    }[];
    const csv = await raw(at(from), at(to), { accept: 'text/csv' });
    expect(csv.type).toMatch(/^text\/csv/);
    expect(csv.text.startsWith('sensorID,value,timestamp\r\n')).toBe(true);
    const rows = parseCsv(csv.text);
    expect(rows[0]).toEqual(['sensorID', 'value', 'timestamp']);
    expect(rows.slice(1)).toEqual(
      json.map((r) => [String(r.sensorID), String(r.value), r.timestamp]),
    );
    expect(rows.length).toBe(to - from + 1);
    // An empty range: the header line alone.
    expect(
      (await raw('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', { accept: 'text/csv' })).text,
    ).toBe('sensorID,value,timestamp\r\n');
  });

  it('answers values as stored: fractions, negatives, tiny and large numbers', async () => {
    const token = await ctx.token('*');
    const values = [0.1, -0.5, 1e-7, 123456789.125, -0];
    const day = Date.parse('2026-11-10T00:00:00Z');
    const logs = values.map((value, i) => ({
      sensorID: SENSOR_2,
      timestamp: new Date(day + i * 60_000).toISOString(),
      value,
    }));
    await storeLogs(ctx, token, 'sensor', logs);
    const body = { sensorId: SENSOR_2, start: '2026-11-10T00:00:00Z', end: '2026-11-11T00:00:00Z' };
    const json = await get(RAW_URL, body);
    expect(json.body).toEqual(
      logs.map((l) => ({
        sensorID: SENSOR_2,
        value: l.value === 0 ? 0 : l.value,
        timestamp: l.timestamp,
      })),
    );
    const csv = parseCsv((await get(RAW_URL, body, { accept: 'text/csv' })).text);
    expect(csv.slice(1).map((r) => Number(r[1]))).toEqual([0.1, -0.5, 1e-7, 123456789.125, 0]);
  });

  it('reads a range of many days in spans of about a page by the daily rollups, each log once and in order, late logs too', async () => {
    const token = await ctx.token('*');
    const sensor = SENSOR_2;
    const d0 = Date.parse('2026-09-01T00:00:00Z');
    const DAY = 86_400_000;
    // Ten days of a log a minute (midnights included); day 4 also a log every 5 s for 8 hours (a day
    // over a page: a span of its own, several pages).
    const logs: { sensorID: number; timestamp: string; value: number }[] = [];
    for (let t = d0; t < d0 + 10 * DAY; t += 60_000)
      logs.push({ sensorID: sensor, timestamp: new Date(t).toISOString(), value: t / 60_000 });
    for (let t = d0 + 4 * DAY + 2_500; t < d0 + 4 * DAY + 8 * 3_600_000; t += 5_000)
      logs.push({ sensorID: sensor, timestamp: new Date(t).toISOString(), value: -t / 1000 });
    expect(await storeLogs(ctx, token, 'sensor', logs)).toBe(logs.length);
    await refreshAll(ctx.db);
    // Late logs of day 7 after the rollups: its count says less than it holds.
    const late = Array.from({ length: 3000 }, (_, i) => ({
      sensorID: sensor,
      timestamp: new Date(d0 + 7 * DAY + 7_000 + i * 7_000).toISOString(),
      value: i + 0.5,
    }));
    expect(await storeLogs(ctx, token, 'sensor', late)).toBe(late.length);
    const start = d0 + 30 * 60_000;
    const end = d0 + 9 * DAY + 12 * 3_600_000;
    const spans = await rawSpans(ctx.db, sensor, start, end);
    // Cut at midnights, several spans, day 4 alone.
    expect(spans.length).toBeGreaterThan(3);
    expect(spans[0][0]).toBe(start);
    expect(spans[spans.length - 1][1]).toBe(end);
    for (const [a, b] of spans.slice(1)) expect([a % DAY, b > a]).toEqual([0, true]);
    expect(spans).toContainEqual([d0 + 4 * DAY, d0 + 5 * DAY, false]);
    const stored = await ctx.db.query<{ ts: Date; value: number }>(
      `SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts`,
      [sensor, new Date(start).toISOString(), new Date(end).toISOString()],
    );
    const answer = await get(RAW_URL, {
      sensorId: sensor,
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
    });
    expect(answer.status).toBe(200);
    const got = answer.body as { value: number; timestamp: string }[];
    expect(got.length).toBe(stored.length);
    const wrong = got.findIndex(
      (r, k) =>
        r.timestamp !== new Date(stored[k].ts).toISOString() || r.value !== Number(stored[k].value),
    );
    expect(wrong, wrong >= 0 ? JSON.stringify(got[wrong]) : '').toBe(-1);
  }, 120_000);
});
