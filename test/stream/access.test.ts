import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { updateClient, upsertClient } from '../../src/auth/clients.js';
import { createTokenService } from '../../src/auth/tokens.js';
import {
  bearer,
  describeEachBackend,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';
import { SENSOR, SITE2_SENSOR } from '../telemetry/fixtures.js';
import { until } from '../wait.js';
import { listen, openStream, closeStreams } from './fixtures.js';

// Who may stream what, every status of the route, and the lifetime of a stream: heartbeats, and
// its end when the client is disabled, loses the site or the role to read, or its token expires.

const SITE3_SENSOR = 30100;

describeEachBackend('GET /v1/stream: access and statuses', (backend) => {
  let ctx: TestContext;
  let base: string;
  let all: string;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 3, transactionsPerSite: 0, imagesPerSite: 0 },
      settings: { MAX_BATCH: 2, STREAM_MAX_SUBSCRIBERS: 4, STREAM_HEARTBEAT_MS: 200 },
    });
    base = await listen(ctx.app);
    all = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());
  afterEach(closeStreams);
  // The streams of the test before are closed from this side; the service lets them go a moment
  // later. Each test starts with none left, so the STREAM_MAX_SUBSCRIBERS limit (4) is all its own.
  beforeEach(async () =>
    until(() => ctx.app.stream.size === 0, 'the streams of the test before to end'),
  );

  const get = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/stream${query}`, { headers });
  const errorOf = async (res: Response) => ({ status: res.status, body: await res.json() });
  const reading = async (sensorID: number, value = Math.random()) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/readings/sensor',
      headers: bearer(all),
      payload: { sensorID, value, timestamp: new Date().toISOString() },
    });
    expect(res.statusCode).toBe(201);
    return value;
  };

  it('401 without a valid token in the Authorization header (a token in the URL is not read)', async () => {
    expect(await errorOf(await get(''))).toMatchObject({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized' },
    });
    expect((await get(`?access_token=${all}`)).status).toBe(401);
    expect((await get('', { authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('400 for a malformed or too long siteIds list, and for a client of more sites than a stream may name', async () => {
    for (const q of ['a', '1,,2', '', '1,', '0', '9999999999', '1;2', '1,2,3'])
      expect(await errorOf(await get(`?siteIds=${q}`, bearer(all))), q).toMatchObject({
        status: 400,
        body: { statusCode: 400, details: [{ path: '/siteIds' }] },
      });
    // '*' reaches 3 sites, more than MAX_BATCH (2): it has to name them.
    expect(await errorOf(await get('', bearer(all)))).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('siteIds') },
    });
  });

  it('403 for a site out of reach or unknown, naming neither', async () => {
    const one = await ctx.token([1]);
    for (const q of ['2', '1,2', '999']) {
      const { status, body } = await errorOf(await get(`?siteIds=${q}`, bearer(one)));
      expect(status).toBe(403);
      expect(body.message).toBe('no access to one or more of the requested sites');
    }
  });

  it('406 when Accept refuses text/event-stream; 200 text/event-stream with no-cache otherwise, the period of the heartbeat, and a heartbeat comment', async () => {
    expect((await get('?siteIds=1', { ...bearer(all), accept: 'application/json' })).status).toBe(
      406,
    );
    const ac = new AbortController();
    const res = await fetch(`${base}/v1/stream?siteIds=1`, {
      headers: bearer(all),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    // The heartbeat's period, so that a client can tell a quiet stream from a dead one.
    expect(res.headers.get('stream-heartbeat-ms')).toBe(
      String(ctx.app.settings.STREAM_HEARTBEAT_MS),
    );
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(': heartbeat\n\n'))
      text += new TextDecoder().decode((await reader.read()).value);
    expect(text.startsWith('id: ')).toBe(true);
    expect(text).toContain('event: snapshot\n');
    expect(text).toContain('retry: 1000\n');
    ac.abort();
  });

  it('503 with retry-after past STREAM_MAX_SUBSCRIBERS streams on an instance', async () => {
    const open = [1, 2, 3, 4].map(() => openStream(base, all, { siteIds: '1' }));
    await Promise.all(open.map((s) => s.next((e) => e.type === 'snapshot')));
    const res = await get('?siteIds=1', bearer(all));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    open.forEach((s) => s.close());
    await until(() => ctx.app.stream.size === 0, 'the closed streams to be let go');
    const again = openStream(base, all, { siteIds: '1' });
    await again.next((e) => e.type === 'snapshot');
    again.close();
  });

  it("a client never receives another tenant's events: each gets exactly its own sites'", async () => {
    const a = openStream(base, await ctx.token([1]));
    const b = openStream(base, await ctx.token([2, 3]));
    const both = openStream(base, all, { siteIds: '1,3' });
    for (const s of [a, b, both]) await s.next((e) => e.type === 'snapshot');
    expect(a.events[0].data.sites.map((x: any) => x.SiteID)).toEqual([1]);
    expect(b.events[0].data.sites.map((x: any) => x.SiteID)).toEqual([2, 3]);
    for (const sensor of [SENSOR, SITE2_SENSOR, SITE3_SENSOR, SENSOR, SITE2_SENSOR])
      await reading(sensor);
    // Each stream is read up to a last reading committed after everything it could wrongly get
    // (events reach a stream in commit order): one of site 1 for a, then one of site 3 for b and both.
    const reachedBy = (value: number) => (e: { type: string; data: any }) =>
      e.type === 'reading' && e.data.record.value === value;
    const sitesOf = (s: typeof a) =>
      s.events.filter((e) => e.type === 'reading').map((e) => e.data.siteId);
    const lastOfA = await reading(SENSOR, 1001);
    await a.next(reachedBy(lastOfA));
    expect(sitesOf(a)).toEqual([1, 1, 1]);
    const lastOfB = await reading(SITE3_SENSOR, 1002);
    await b.next(reachedBy(lastOfB));
    await both.next(reachedBy(lastOfB));
    expect(sitesOf(b)).toEqual([2, 3, 2, 3]);
    expect(sitesOf(both)).toEqual([1, 3, 1, 1, 3]);
    [a, b, both].forEach((s) => s.close());
  });

  it('ends the stream when the client is disabled or loses a site it streams (its reconnection is refused)', async () => {
    await upsertClient(ctx.db, {
      clientId: 'revoked',
      clientSecret: 'secret-123456',
      siteIds: [1, 2],
    });
    const token = await ctx.token([1, 2], { clientId: 'revoked' });
    await upsertClient(ctx.db, {
      clientId: 'moved',
      clientSecret: 'secret-123456',
      siteIds: [1, 2],
    });
    const moved = await ctx.token([1, 2], { clientId: 'moved' });
    const s = openStream(base, token, { siteIds: '1' });
    const m = openStream(base, moved, { siteIds: '2' });
    const unnamed = openStream(base, moved);
    for (const x of [s, m, unnamed]) await x.next((e) => e.type === 'snapshot');
    await updateClient(ctx.db, 'revoked', { disabled: true });
    await upsertClient(ctx.db, {
      clientId: 'moved',
      clientSecret: 'secret-123456',
      siteIds: [2, 3],
    });
    await until(() => s.errors.some((e) => e.code === 401), 'the disabled client to be refused');
    // Still reaches site 2: that stream goes on; the one of "every site of the client" ends and comes back with the new ones.
    await until(() => unnamed.connects.length === 2, 'the stream of every site to reconnect');
    await unnamed.next(
      (e) => e.type === 'snapshot' && e.data.sites.map((x: any) => x.SiteID).join() === '2,3',
    );
    expect(m.connects).toHaveLength(1);
    [s, m, unnamed].forEach((x) => x.close());
  });

  it('ends the stream when the client is given a role that may not read (its reconnection is refused)', async () => {
    const token = await ctx.token([1], { clientId: 'demoted', role: 'operator' });
    const s = openStream(base, token, { siteIds: '1' });
    await s.next((e) => e.type === 'snapshot');
    await updateClient(ctx.db, 'demoted', { role: 'edge' });
    await until(() => s.errors.some((e) => e.code === 403), 'the edge role to be refused');
    s.close();
  });

  it('ends the stream when its token expires', async () => {
    // A token of 1 s (stamped to the second: it may have less). On a busy machine it can expire
    // before its stream opens, refused at once: then the test goes again with a longer one.
    for (let ttl = 1; ; ttl *= 2) {
      const short = createTokenService(testSettings().JWT_SECRET!, ttl).issue(
        'client-1',
      ).accessToken;
      const s = openStream(base, short, { siteIds: '1' });
      await until(() => s.events.length || s.errors.length, 'the stream to open or be refused');
      if (!s.events.length && ttl < 16) {
        expect(s.errors).toEqual([expect.objectContaining({ code: 401 })]);
        s.close();
        continue;
      }
      expect(s.events[0].type).toBe('snapshot');
      await until(() => s.errors.some((e) => e.code === 401), 'the expired token to be refused');
      expect(s.connects).toHaveLength(2);
      s.close();
      return;
    }
  });
});
