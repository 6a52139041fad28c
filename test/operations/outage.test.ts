import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, openTestDb, testConfig, describeWith } from '../helper.js';
import { BlackHoleProxy } from './proxy.js';
import { openStream, closeStreams } from '../stream/fixtures.js';
import { until } from '../wait.js';

// The database fails under a running service: the network to it goes silent, a table is locked,
// its connections are terminated. Every request is answered within its deadline (uploads 500,
// other routes 503 with retry-after, /health 503), the service recovers by itself, and every upload
// it acknowledged is stored. A network, a lock held by another session and a terminated backend
// exist only with a database server: PostgreSQL only (PGlite runs inside this process).

const QUERY_TIMEOUT_MS = 1500;
const WRITE_TIMEOUT_MS = 2000;
const PUMP = 10401; // demo ids: site * 10000 + n
const SENSOR = 10101;
const BASE = Date.UTC(2026, 7, 1);
/**
 * Deadlines are what this suite is about: an answer must come from the service giving up at its
 * deadline (1.5 s, 2 s), not from anything that would end the wait later (the pool's connect
 * timeout, 10 s; TCP keepalive, minutes). So the answers given while the database is unreachable
 * are also held to this bound: well past the deadlines (the machine is busy), well short of 10 s.
 */
const BOUND_MS = 8000;
/** Between two uploads of a gateway of the load (pacing, not a wait for anything). */
const GATEWAY_PAUSE_MS = 20;

describeWith(['postgres'], 'database outages [postgres]', () => {
  const appName = `outage-${randomBytes(4).toString('hex')}`;
  let direct: Database;
  let proxy: BlackHoleProxy;
  let proxied: Database;
  let app: FastifyTypebox;
  let base: string;
  let token: string;
  let minute = 0;

  beforeAll(async () => {
    direct = await openTestDb('postgres');
    await importDocument(
      direct,
      generateDemo({ sites: 2, transactionsPerSite: 1, imagesPerSite: 0 }),
    );
    const [{ schema }] = await direct.query<{ schema: string }>(
      'SELECT current_schema() AS schema',
    );
    const target = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await new BlackHoleProxy({
      host: target.hostname,
      port: Number(target.port || 5432),
    }).start();
    target.host = `127.0.0.1:${proxy.port}`;
    target.searchParams.set('application_name', appName);
    proxied = await openPostgres(target.toString(), { schema });
    app = await buildApp(
      testConfig({
        QUERY_TIMEOUT_MS,
        WRITE_TIMEOUT_MS,
        CLIENT_CACHE_MS: 1000,
        ROLLUP_REFRESH_MS: 200,
      }),
      { db: proxied, logger: false },
    );
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    await upsertClient(direct, { clientId: 'edge', clientSecret: 'secret-123456', siteIds: '*' });
    token = (
      await app.inject({
        method: 'POST',
        url: '/token',
        payload: { clientId: 'edge', clientSecret: 'secret-123456' },
      })
    ).json().accessToken;
  });
  afterAll(async () => {
    await app?.close();
    await proxied?.close();
    await proxy?.close();
    await direct?.close();
  });
  afterEach(closeStreams);

  const timed = async <T>(run: () => Promise<T>) => {
    const started = Date.now();
    const result = await run();
    return { result, ms: Date.now() - started };
  };
  const get = (url: string, auth = true) =>
    app.inject({ method: 'GET', url, headers: auth ? bearer(token) : {} });
  const health = () => get('/health', false);
  const sites = () => get('/v1/sites?page=1&perPage=5');
  const issueToken = () =>
    app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'edge', clientSecret: 'secret-123456' },
    });
  const upload = (kind: 'pump' | 'sensor', role: 'logs' | 'readings' = 'logs') => {
    const timestamp = new Date(BASE + minute++ * 60_000).toISOString();
    const payload =
      kind === 'pump'
        ? { sitePumpID: PUMP, running: true, timestamp }
        : { sensorID: SENSOR, value: 1, timestamp };
    return app
      .inject({ method: 'POST', url: `/v1/edge/${role}/${kind}`, headers: bearer(token), payload })
      .then((res) => ({ res, timestamp }));
  };

  /** Pump logs sent by a few gateways in a loop until stopped; the answers, and the times of those acknowledged (201). */
  function uploadLoad() {
    let running = true;
    const acked: string[] = [];
    const statuses: number[] = [];
    const gateway = async () => {
      while (running) {
        const { res, timestamp } = await upload('pump');
        statuses.push(res.statusCode);
        if (res.statusCode === 201) acked.push(timestamp);
        await new Promise((r) => setTimeout(r, GATEWAY_PAUSE_MS));
      }
    };
    const gateways = Array.from({ length: 4 }, gateway);
    return {
      acked,
      statuses,
      async stop() {
        running = false;
        await Promise.all(gateways);
        return { acked, statuses };
      },
    };
  }
  const stored = async (times: string[]) =>
    (
      await direct.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pump_logs WHERE pump_id = $1 AND ts = ANY($2::timestamptz[])',
        [PUMP, times],
      )
    )[0].n;
  const recovered = async () => {
    let last = '';
    await until(
      async () => {
        const [h, s, u] = await Promise.all([health(), sites(), upload('pump')]);
        last = `/health ${h.statusCode}, /v1/sites ${s.statusCode}, upload ${u.res.statusCode}`;
        return h.statusCode === 200 && s.statusCode === 200 && u.res.statusCode === 201;
      },
      () => `recovery (last: ${last})`,
      { every: 200 },
    );
  };
  const lockWaits = async () =>
    (
      await direct.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [appName],
      )
    )[0].n;

  it('answers within its deadlines while the network to the database is silent, and recovers when it is back', async () => {
    expect((await health()).statusCode).toBe(200);
    const stream = openStream(base, token, { siteIds: '1' });
    await stream.next((e) => e.type === 'snapshot');
    const load = uploadLoad();
    await until(() => load.acked.length > 0, 'the load to be stored');
    proxy.blackHole();
    try {
      // Nothing passes to or from the database now: every answer is the service giving up by itself.
      const [h, s, u, t] = await Promise.all([
        timed(health),
        timed(sites),
        timed(() => upload('pump')),
        timed(issueToken),
      ]);
      expect(h.result.statusCode).toBe(503);
      expect(s.result.statusCode).toBe(503);
      expect(s.result.headers['retry-after']).toMatch(/^\d+$/);
      expect(s.result.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
      expect(u.result.res.statusCode).toBe(500);
      expect(u.result.res.json().message).toMatch(/could not store/);
      expect(t.result.statusCode).toBe(503);
      for (const c of [h, s, u, t]) expect(c.ms).toBeLessThan(BOUND_MS);
      // A longer outage: every gateway has had another upload given up meanwhile, its connection
      // dropped; the pool's new connections all hang (until its connect timeout).
      const failed = load.statuses.filter((c) => c === 500).length;
      await until(
        () => load.statuses.filter((c) => c === 500).length >= failed + 4,
        'more uploads to be given up',
      );
      const late = await timed(health);
      expect(late.result.statusCode).toBe(503);
      expect(late.ms).toBeLessThan(BOUND_MS);
    } finally {
      proxy.restore();
    }
    await recovered();
    // The live stream follows the database again (its reads, like every other, gave up and went on).
    try {
      const { res } = await upload('sensor', 'readings');
      expect(res.statusCode).toBe(201);
      await stream.next((e) => e.type === 'reading' && e.data.kind === 'sensor');
    } finally {
      stream.close();
    }
    const { acked, statuses } = await load.stop();
    expect(statuses).toContain(500);
    expect(acked.length).toBeGreaterThan(0);
    expect(await stored(acked)).toBe(acked.length);
  }, 60_000);

  it('keeps other kinds, reads and tokens fast while sensor_logs is locked, and cancels the sensor writes at their deadline', async () => {
    const [{ schema }] = await direct.query<{ schema: string }>(
      'SELECT current_schema() AS schema',
    );
    const other = await openPostgres(process.env.TEST_DATABASE_URL!, { schema, max: 1 });
    let unlock!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holding = other.transaction(async (tx) => {
      await tx.query('LOCK TABLE sensor_logs IN ACCESS EXCLUSIVE MODE');
      locked();
      await new Promise<void>((r) => (unlock = r));
    });
    try {
      await isLocked;
      // More stuck sensor uploads than the pool has connections, waiting behind the lock until
      // their deadline (WRITE_TIMEOUT_MS).
      let sensorsAnswered = 0;
      const sensors = Array.from({ length: 12 }, () =>
        upload('sensor').finally(() => sensorsAnswered++),
      );
      await until(async () => (await lockWaits()) > 0, 'the sensor writes to wait for the lock');
      for (let round = 0; round < 3; round++) {
        const checks = await Promise.all([
          upload('pump', 'readings'),
          upload('pump'),
          upload('sensor', 'readings'),
          health(),
          sites(),
          issueToken(),
        ]);
        expect(checks.map((c) => ('res' in c ? c.res : c).statusCode)).toEqual([
          201, 201, 201, 200, 200, 200,
        ]);
        // Not queued behind the stuck writes: answered before any of them (at their deadline).
        if (round === 0) expect(sensorsAnswered).toBe(0);
      }
      // A read of the locked table gives up at its deadline too (the lock is held until the end).
      const raw = await app.inject({
        method: 'POST',
        url: '/v1/sensors/logs/raw',
        headers: bearer(token),
        payload: {
          sensorId: SENSOR,
          start: new Date(BASE).toISOString(),
          end: new Date(BASE + 86_400_000).toISOString(),
        },
      });
      expect(raw.statusCode).toBe(503);
      expect(raw.headers['retry-after']).toMatch(/^\d+$/);
      for (const s of await Promise.all(sensors)) expect(s.res.statusCode).toBe(500);
      // Cancelled, not left queued behind the lock on the server (it is still held).
      await until(async () => (await lockWaits()) === 0, 'the cancelled writes to leave the lock');
    } finally {
      unlock?.();
      await holding;
      await other.close();
    }
    expect((await upload('sensor')).res.statusCode).toBe(201);
  }, 60_000);

  it('recovers when its backends are terminated, and loses no acknowledged upload', async () => {
    const load = uploadLoad();
    await until(() => load.acked.length > 0, 'the load to be stored');
    const [{ n }] = await direct.query<{ n: number }>(
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [appName],
    );
    expect(n).toBeGreaterThan(0);
    // Every gateway has been answered since (on the connections that were terminated, or new ones).
    const answered = load.statuses.length;
    await until(() => load.statuses.length >= answered + 4, 'the load to go on');
    await recovered();
    const { acked } = await load.stop();
    expect(acked.length).toBeGreaterThan(0);
    expect(await stored(acked)).toBe(acked.length);
    expect((await sites()).statusCode).toBe(200);
  }, 60_000);
});
