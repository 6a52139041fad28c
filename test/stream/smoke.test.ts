import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR } from '../telemetry/fixtures.js';
import { listen, openStream } from './fixtures.js';

describeEachBackend('smoke', (backend) => {
  let ctx: TestContext;
  let base: string;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 } });
    base = await listen(ctx.app);
    token = await ctx.token();
  });
  afterAll(async () => ctx?.close());

  it('snapshot then a reading', async () => {
    const s = openStream(base, token, { siteIds: '1' });
    const snap = await s.next((e) => e.type === 'snapshot');
    console.log(JSON.stringify(snap).slice(0, 300));
    const ts = new Date().toISOString();
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/edge/readings/sensor', headers: bearer(token), payload: { sensorID: SENSOR, value: 7, timestamp: ts } });
    expect(res.statusCode).toBe(201);
    const r = await s.next((e) => e.type === 'reading');
    console.log(r);
    s.close();
  });
});
