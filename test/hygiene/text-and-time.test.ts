import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { PUMP, SENSOR, snapshot } from '../telemetry/fixtures.js';

// Text that PostgreSQL cannot hold as sent (a lone UTF-16 surrogate, NUL, bytes that are not UTF-8)
// and times that do not name one instant (hour 24, second 60, February 30, a date alone) are a 400
// with the error body on every route that takes them, and nothing is stored.

const BAD_TIMES = [
  '2026-11-10T24:59:60Z',
  '2026-11-10T24:00:00Z',
  '2026-11-10T23:59:60Z',
  '2026-11-10T12:00:60.5+01:00',
  '2026-02-30T00:00:00Z',
  '2026-11-10',
];
const GOOD_TIME = '2026-11-10T23:59:59.999Z';

describeEachBackend('text and time inputs', (backend) => {
  let ctx: TestContext;
  let token: string;
  const post = (url: string, payload: string | object, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      headers: { ...bearer(token), 'content-type': 'application/json', ...headers },
    });
  const expect400 = (res: Awaited<ReturnType<typeof post>>, path?: string) => {
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    if (path) expect(body.details?.[0]?.path, res.body).toBe(path);
  };
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 } });
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it('refuses a lone surrogate in a reading or a log (400, not 500 or U+FFFD), and stores nothing', async () => {
    const before = await snapshot(ctx.db);
    for (const url of ['/v1/edge/readings/pump', '/v1/edge/logs/pump']) {
      for (const status of ['\\ud800x', 'a\\udfffb', 'end\\udbff', '\\udc00\\ud800']) {
        const res = await post(
          url,
          `{"sitePumpID":${PUMP},"timestamp":"${GOOD_TIME}","status":"${status}"}`,
        );
        expect400(res, '/status');
        expect(res.json().message).toContain('surrogate');
      }
      // In a key too, and deep in a batch.
      expect400(
        await post(
          `${url}/batch`,
          `[{"sitePumpID":${PUMP},"timestamp":"${GOOD_TIME}","\\ud800":1}]`
            .replace(/^\[/, url.includes('readings') ? '{"readings":[' : '[')
            .replace(/\]$/, url.includes('readings') ? ']}' : ']'),
        ),
      );
    }
    expect(await snapshot(ctx.db)).toEqual(before);
    // A proper pair (an emoji written as two escapes) is text, and is stored as sent.
    const ok = await post(
      '/v1/edge/readings/pump',
      `{"sitePumpID":${PUMP},"timestamp":"${GOOD_TIME}","status":"ok \\ud83d\\ude00"}`,
    );
    expect(ok.statusCode, ok.body).toBe(201);
    const [row] = await ctx.db.query<{ status: string }>(
      `SELECT record->>'status' AS status FROM current_readings WHERE record->>'sitePumpID' = $1`,
      [String(PUMP)],
    );
    expect(row.status).toBe('ok \u{1F600}');
  });

  it('refuses a lone surrogate or NUL in any JSON body: alarms, token, downloads', async () => {
    expect400(
      await post(
        '/v1/edge/alarms',
        `{"siteId":1,"alarmType":"\\ud800","message":"m","timestamp":"${GOOD_TIME}"}`,
      ),
      '/alarmType',
    );
    expect400(await post('/token', '{"clientId":"\\udfff","clientSecret":"x"}'), '/clientId');
    expect400(
      await post(
        '/v1/sensors/logs/load',
        `{"sensorIds":[${SENSOR}],"start":"2026-11-01T00:00:00Z","end":"2026-11-02T00:00:00Z","timeZone":"Europe/\\u0000"}`,
      ),
      '/timeZone',
    );
  });

  it('refuses a body that is not UTF-8 instead of storing U+FFFD', async () => {
    const before = await snapshot(ctx.db);
    const bytes = Buffer.concat([
      Buffer.from(`{"sitePumpID":${PUMP},"timestamp":"${GOOD_TIME}","status":"`),
      Buffer.from([0xed, 0xa0, 0x80, 0xff]),
      Buffer.from('"}'),
    ]);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/logs/pump',
      payload: bytes,
      headers: { ...bearer(token), 'content-type': 'application/json' },
    });
    expect400(res);
    expect(res.json().message).toContain('UTF-8');
    expect(await snapshot(ctx.db)).toEqual(before);
  });

  it('refuses hour 24, second 60, February 30 and a date without a time on every route that takes a time', async () => {
    const before = await snapshot(ctx.db);
    for (const t of BAD_TIMES) {
      expect400(
        await post('/v1/edge/logs/sensor', { sensorID: SENSOR, value: 1, timestamp: t }),
        '/timestamp',
      );
      expect400(
        await post('/v1/edge/readings/sensor/batch', {
          readings: [{ sensorID: SENSOR, value: 1, timestamp: t }],
        }),
        '/readings/0/timestamp',
      );
      expect400(
        await post('/v1/edge/logs/meter', {
          flowMeterID: 10301,
          timestamp: GOOD_TIME,
          startTimestamp: t,
        }),
        '/startTimestamp',
      );
      expect400(
        await post('/v1/edge/alarms', {
          siteId: 1,
          alarmType: 'HighPressure',
          message: 'm',
          timestamp: t,
        }),
        '/timestamp',
      );
      expect400(
        await post('/v1/sensors/logs/load', {
          sensorIds: [SENSOR],
          start: t,
          end: '2026-11-20T00:00:00Z',
        }),
        '/start',
      );
      expect400(
        await post('/v1/sensors/logs/raw', {
          sensorId: SENSOR,
          start: '2026-11-01T00:00:00Z',
          end: t,
        }),
        '/end',
      );
      expect400(
        await post('/v1/transactions/logs/load', {
          siteIds: [1],
          start: t,
          end: '2026-11-20T00:00:00Z',
        }),
        '/start',
      );
      expect400(
        await post('/v1/transactions/change-logs', { start: '2026-11-01T00:00:00Z', end: t }),
        '/end',
      );
      const q = await ctx.app.inject({
        method: 'GET',
        url: `/v1/config/updates/site?siteId=1&startDate=${encodeURIComponent(t)}`,
        headers: bearer(token),
      });
      expect400(q, '/startDate');
    }
    expect(await snapshot(ctx.db)).toEqual(before);
    expect((await ctx.db.query(`SELECT 1 FROM site_alarms`)).length).toBe(0);
    // The same requests with a proper time succeed, so the 400s above were the times' doing.
    expect(
      (await post('/v1/edge/logs/sensor', { sensorID: SENSOR, value: 1, timestamp: GOOD_TIME }))
        .statusCode,
    ).toBe(201);
    expect(
      (
        await post('/v1/edge/alarms', {
          siteId: 1,
          alarmType: 'HighPressure',
          message: 'm',
          timestamp: GOOD_TIME,
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await post('/v1/sensors/logs/raw', {
          sensorId: SENSOR,
          start: '2026-11-01T00:00:00Z',
          end: '2026-11-11T00:00',
        })
      ).statusCode,
    ).toBe(200);
  });

  it('keeps 23:59:59 and 00:00 of the next day as two different keys', async () => {
    const a = await post('/v1/edge/logs/sensor/batch', [
      { sensorID: SENSOR, value: 1, timestamp: '2026-11-12T23:59:59Z' },
      { sensorID: SENSOR, value: 2, timestamp: '2026-11-13T00:00:00Z' },
    ]);
    expect(a.json()).toEqual({ received: 2, stored: 2, duplicates: 0 });
  });
});
