import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR } from '../telemetry/fixtures.js';

// Error messages stay short whatever the request: a 404 for 10,000 unknown ids names a few and
// counts the rest, details are capped, and a 403 names nothing the client asked for.

const N = 10_000;
const ids = (from: number) => Array.from({ length: N }, (_, i) => from + i);

describeEachBackend('bounded error messages', (backend) => {
  let ctx: TestContext;
  let token: string;
  let siteTwo: string;
  const post = (url: string, payload: object, who = token) =>
    ctx.app.inject({ method: 'POST', url, headers: bearer(who), payload });
  const expectBounded = (res: Awaited<ReturnType<typeof post>>, status: number) => {
    expect(res.statusCode, res.body.slice(0, 300)).toBe(status);
    expect(res.body.length, res.body.slice(0, 300)).toBeLessThan(4000);
    const body = res.json();
    expect(body.message.length).toBeLessThan(300);
    expect((body.details ?? []).length).toBeLessThanOrEqual(20);
    return body;
  };
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 2, transactionsPerSite: 1, imagesPerSite: 0 } });
    token = await ctx.token('*');
    siteTwo = await ctx.token([2]);
  });
  afterAll(async () => ctx?.close());

  it('names a few of 10,000 unknown ids in a 404 and counts the rest', async () => {
    const ts = '2026-11-01T00:00:00Z';
    const upload = expectBounded(
      await post(
        '/v1/edge/logs/sensor/batch',
        ids(900_000).map((id) => ({ sensorID: id, value: 1, timestamp: ts })) as unknown as object,
      ),
      404,
    );
    expect(upload.message).toContain('and 9995 more');
    const load = expectBounded(
      await post('/v1/sensors/logs/load', {
        sensorIds: ids(900_000),
        start: ts,
        end: '2026-11-02T00:00:00Z',
      }),
      404,
    );
    expect(load.message).toContain('more');
    expectBounded(
      await post('/v1/edge/alarms/batch', {
        siteId: 1,
        alarms: ids(900_000).map((id) => ({
          sensorID: id,
          alarmType: 'x',
          message: 'm',
          timestamp: ts,
        })),
      }),
      404,
    );
    expectBounded(
      await post('/v1/edge/alarms/resolve', {
        siteId: 1,
        alarms: ids(900_000).map((id) => ({ SiteAlarmLogID: String(id) })),
      }),
      404,
    );
    const uuids = Array.from(
      { length: 500 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    expectBounded(await post('/v1/images/tickets', { uuids }), 404);
  });

  it('caps the details of 10,000 bad entries', async () => {
    const body = expectBounded(
      await post(
        '/v1/edge/logs/sensor/batch',
        ids(1).map(() => ({
          sensorID: SENSOR,
          value: 'x',
          timestamp: 'nope',
        })) as unknown as object,
      ),
      400,
    );
    expect(body.details.length).toBeGreaterThan(0);
  });

  it("answers 403 for another company's sensors in a short message naming none of them", async () => {
    const sensors = (
      await ctx.db.query<{ id: number }>(`SELECT sensor_id AS id FROM sensors WHERE site_id = 1`)
    ).map((r) => r.id);
    const body = expectBounded(
      await post(
        '/v1/sensors/logs/load',
        { sensorIds: sensors, start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' },
        siteTwo,
      ),
      403,
    );
    for (const id of sensors) expect(body.message).not.toContain(String(id));
    expect(body.message).not.toMatch(/\b1\b/);
  });
});
