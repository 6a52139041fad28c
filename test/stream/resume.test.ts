import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { fromSnapshot } from '../../src/stream/cursor.js';
import { Pruner, pruneEvents } from '../../src/stream/prune.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { PUMP, SENSOR, SENSOR_2 } from '../telemetry/fixtures.js';
import { until } from '../wait.js';
import { listen, openStream, type Stream, closeStreams } from './fixtures.js';

// Reconnecting with Last-Event-ID: what was missed while retained, else a fresh snapshot; and the
// end of every stream when the service shuts down.

describeEachBackend('GET /v1/stream: resume with Last-Event-ID', (backend) => {
  let ctx: TestContext;
  let base: string;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 } });
    base = await listen(ctx.app);
    token = await ctx.token();
  });
  afterAll(async () => ctx?.close());
  afterEach(closeStreams);

  let n = 0;
  const reading = async (sensorID = SENSOR) => {
    const value = ++n;
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/readings/sensor',
      headers: bearer(token),
      payload: { sensorID, value, timestamp: new Date(Date.now() + n).toISOString() },
    });
    expect(res.statusCode).toBe(201);
    return value;
  };
  const values = (s: Stream, from = 0) =>
    s.events
      .slice(from)
      .filter((e) => e.type === 'reading')
      .map((e) => e.data.record.value);
  const lastReading = (s: Stream, value: number) =>
    s.next((e) => e.type === 'reading' && e.data.record.value === value);

  it('replays exactly what was missed, in order and without a snapshot, then goes on live', async () => {
    const first = openStream(base, token, { siteIds: '1' });
    await first.next((e) => e.type === 'snapshot');
    const a = await reading();
    const got = await lastReading(first, a);
    first.close();
    const missed = [await reading(), await reading(SENSOR_2), await reading()];
    const alarm = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/alarms',
      headers: bearer(token),
      payload: {
        siteId: 1,
        sitePumpID: PUMP,
        alarmType: 'Missed',
        message: 'm',
        timestamp: new Date().toISOString(),
      },
    });
    expect(alarm.statusCode).toBe(201);
    const again = openStream(base, token, { siteIds: '1', lastEventId: got.id });
    await again.next((e) => e.type === 'alarm');
    const live = await reading();
    await lastReading(again, live);
    expect(again.events.map((e) => e.type)).toEqual([
      'reading',
      'reading',
      'reading',
      'alarm',
      'reading',
    ]);
    expect(values(again)).toEqual([...missed, live]);
    // Every id resumes from its own event: from the second missed one on, the rest and nothing before.
    const third = openStream(base, token, { siteIds: '1', lastEventId: again.events[1].id });
    await lastReading(third, live);
    expect(values(third)).toEqual([missed[2], live]);
    again.close();
    third.close();
  });

  it('sends a snapshot first for an id it cannot resume: unknown, of other sites, or no longer retained', async () => {
    const s = openStream(base, token, { siteIds: '1' });
    await s.next((e) => e.type === 'snapshot');
    const last = await lastReading(s, await reading());
    s.close();
    for (const [id, siteIds] of [
      ['garbage!', '1'],
      ['zz', '1'],
      [last.id, '1,2'],
      [last.id.replace(/-.*/, ''), '1'],
    ] as const) {
      const other = openStream(base, token, { siteIds, lastEventId: id });
      expect((await other.next(() => true)).type, id).toBe('snapshot');
      other.close();
    }
    const missed = await reading();
    const [now] = await ctx.db.query<{ snap: string }>(
      'SELECT pg_current_snapshot()::text AS snap',
    );
    expect(await pruneEvents(ctx.db, fromSnapshot(now.snap))).toBeGreaterThan(0);
    const pruned = openStream(base, token, { siteIds: '1', lastEventId: last.id });
    const snap = await pruned.next(() => true);
    expect(snap.type).toBe('snapshot');
    expect(snap.data.sites[0].Current.sensors.find((r: any) => r.sensorID === SENSOR).value).toBe(
      missed,
    );
    // After the pruning, ids are good again.
    const after = await lastReading(pruned, await reading());
    pruned.close();
    const next = await reading();
    const resumed = openStream(base, token, { siteIds: '1', lastEventId: after.id });
    expect((await resumed.next(() => true)).data.record.value).toBe(next);
    resumed.close();
  });

  it('keeps every event at least the retention time after its commit, then prunes it', async () => {
    const count = async () =>
      (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM stream_events'))[0].n;
    const pruner = new Pruner(ctx.db, 300_000);
    await reading();
    const before = await count();
    const t0 = Date.now();
    expect(await pruner.run(t0)).toBe(0); // notes what is committed now
    await reading();
    expect(await pruner.run(t0 + 299_999)).toBe(0);
    expect(await count()).toBe(before + 1);
    expect(await pruner.run(t0 + 300_000)).toBe(before); // those committed before t0 go; the newer one stays
    expect(await count()).toBe(1);
  });

  it('ends every stream at shutdown, cleanly and at once, before the database closes', async () => {
    const other = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 },
    });
    const url = await listen(other.app);
    const streams = [1, 2, 3].map(async () => {
      const s = openStream(url, await other.token());
      await s.next((e) => e.type === 'snapshot');
      return s;
    });
    const open = await Promise.all(streams);
    // "At once": the server waits for its open connections when it closes, and nothing but the
    // service ends a stream (the clients keep theirs open, heartbeats go on), so close() returns
    // only if the service ended every stream first; else this test would time out.
    await other.close();
    expect(other.app.stream.size).toBe(0);
    // Each client saw its stream end and tries to reconnect (here to nothing: the only instance is gone).
    await until(() => open.every((s) => s.errors.length > 0), 'every client to see its stream end');
    for (const s of open) s.close();
  });
});
