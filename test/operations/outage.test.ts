import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeWith, openTestDb, testSettings } from '../helper.js';
import { until } from '../wait.js';
import { BlackHoleProxy } from './proxy.js';
import { openStream } from '../stream/fixtures.js';

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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One request on a connection of its own, as a client outside sees it: timed from before the
 * connection is opened to the last byte of the answer.
 */
function send(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; ms: number; body: string; headers: Record<string, unknown> }> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      {
        method,
        agent: false,
        headers: {
          ...opts.headers,
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            ms: Date.now() - started,
            body,
            headers: res.headers,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

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
    // As connect() opens it for this configuration.
    proxied = await openPostgres(target.toString(), { schema, connectTimeoutMs: QUERY_TIMEOUT_MS });
    app = await buildApp(
      testSettings({
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

  /** Pump logs sent by a few gateways in a loop until stopped; the times of those acknowledged (201). */
  function uploadLoad() {
    let running = true;
    const acked: string[] = [];
    const statuses: number[] = [];
    const gateway = async () => {
      while (running) {
        const { res, timestamp } = await upload('pump');
        statuses.push(res.statusCode);
        if (res.statusCode === 201) acked.push(timestamp);
        await sleep(20);
      }
    };
    const gateways = Array.from({ length: 4 }, gateway);
    return {
      /** Uploads answered so far. */
      answered: () => statuses.length,
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
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [h, s, u] = await Promise.all([health(), sites(), upload('pump')]);
      if (h.statusCode === 200 && s.statusCode === 200 && u.res.statusCode === 201)
        return Date.now();
      if (Date.now() > deadline)
        throw new Error(
          `no recovery: /health ${h.statusCode}, /v1/sites ${s.statusCode}, upload ${u.res.statusCode}`,
        );
      await sleep(200);
    }
  };

  it('answers within its deadlines while the network to the database is silent, and recovers when it is back', async () => {
    expect((await health()).statusCode).toBe(200);
    const stream = openStream(base, token, { siteIds: '1' });
    await stream.next((e) => e.type === 'snapshot');
    const load = uploadLoad();
    await until(() => load.answered() >= 4, 'the first uploads to be answered');
    proxy.blackHole();
    try {
      const [h, s, u, t] = await Promise.all([
        timed(health),
        timed(sites),
        timed(() => upload('pump')),
        timed(issueToken),
      ]);
      expect(h.result.statusCode).toBe(503);
      expect(h.ms).toBeLessThan(2000);
      expect(s.result.statusCode).toBe(503);
      expect(s.result.headers['retry-after']).toMatch(/^\d+$/);
      expect(s.result.json()).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
      expect(s.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
      expect(u.result.res.statusCode).toBe(500);
      expect(u.result.res.json().message).toMatch(/could not store/);
      expect(u.ms).toBeLessThanOrEqual(WRITE_TIMEOUT_MS);
      expect(t.result.statusCode).toBe(503);
      expect(t.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
      await sleep(3000); // a longer outage: the pool's connections all hang meanwhile
      expect((await timed(health)).ms).toBeLessThan(2000);
    } finally {
      proxy.restore();
    }
    await recovered();
    // The live stream follows the database again (its reads, like every other, gave up and went on).
    try {
      const { res } = await upload('sensor', 'readings');
      expect(res.statusCode).toBe(201);
      await stream.next((e) => e.type === 'reading' && e.data.kind === 'sensor', { ms: 10_000 });
    } finally {
      stream.close();
    }
    const { acked, statuses } = await load.stop();
    expect(statuses).toContain(500);
    expect(acked.length).toBeGreaterThan(0);
    expect(await stored(acked)).toBe(acked.length);
  }, 60_000);

  it('with the default deadlines, answers every read and /token 503 within 5 s of sending it, every upload 500 within 10 s, measured by the client, and loses no acknowledged upload', async () => {
    // Wall-clock bounds are what this test is about: the contract is a time measured from outside,
    // from sending a request to its answer, whatever the request did meanwhile (the client lookup
    // waiting on the database first, several calls one after another, connections being opened).
    const QUERY_BOUND_MS = 5000;
    const WRITE_BOUND_MS = 10_000;
    const config = testSettings({ CLIENT_CACHE_MS: 1000 }); // the defaults otherwise
    expect([config.QUERY_TIMEOUT_MS, config.WRITE_TIMEOUT_MS]).toEqual([
      QUERY_BOUND_MS,
      WRITE_BOUND_MS,
    ]);
    const [{ schema }] = await direct.query<{ schema: string }>(
      'SELECT current_schema() AS schema',
    );
    const target = new URL(process.env.TEST_DATABASE_URL!);
    target.host = `127.0.0.1:${proxy.port}`;
    target.searchParams.set('application_name', appName);
    // As connect() opens it for this configuration.
    const pool = await openPostgres(target.toString(), {
      schema,
      connectTimeoutMs: config.QUERY_TIMEOUT_MS,
    });
    const service = await buildApp(config, { db: pool, logger: false });
    const url = await service.listen({ port: 0, host: '127.0.0.1' });
    const auth = bearer(token);
    const read = () => send(url, 'GET', '/v1/sites?page=1&perPage=5', { headers: auth });
    const login = () =>
      send(url, 'POST', '/token', { body: { clientId: 'edge', clientSecret: 'secret-123456' } });
    const acked: string[] = [];
    const post = async () => {
      const timestamp = new Date(BASE + minute++ * 60_000).toISOString();
      const res = await send(url, 'POST', '/v1/edge/logs/pump', {
        headers: auth,
        body: { sitePumpID: PUMP, running: true, timestamp },
      });
      if (res.status === 201) acked.push(timestamp);
      return res;
    };
    /** Runs each task at its time (ms from now): requests in flight together, arriving one after another. */
    const spread = <T>(n: number, every: number, task: () => Promise<T>) =>
      Promise.all(
        Array.from(
          { length: n },
          (_, i) =>
            new Promise<T>((resolve, reject) => {
              setTimeout(() => task().then(resolve, reject), i * every);
            }),
        ),
      );
    try {
      expect((await read()).status).toBe(200);
      expect((await post()).status).toBe(201);
      proxy.blackHole();
      let answers;
      try {
        answers = await Promise.all([
          // 125 reads over 2.5 s: the first with the client record fresh in the cache, the later
          // ones with it due to be read again (that read waits on the database too).
          spread(125, 20, read),
          spread(10, 250, login),
          spread(10, 250, post),
        ]);
      } finally {
        proxy.restore();
      }
      const [reads, logins, posts] = answers;
      const late = (rs: { status: number; ms: number }[], status: number, bound: number) =>
        rs.filter((r) => r.status !== status || r.ms > bound).map((r) => `${r.status} ${r.ms} ms`);
      expect(late(reads, 503, QUERY_BOUND_MS), 'reads').toEqual([]);
      expect(late(logins, 503, QUERY_BOUND_MS), 'POST /token').toEqual([]);
      expect(late(posts, 500, WRITE_BOUND_MS), 'uploads').toEqual([]);
      for (const r of reads) expect(r.headers['retry-after']).toMatch(/^\d+$/);
      const until = Date.now() + 30_000;
      for (;;) {
        const [h, u] = await Promise.all([send(url, 'GET', '/health'), post()]);
        if (h.status === 200 && u.status === 201) break;
        if (Date.now() > until)
          throw new Error(`no recovery: /health ${h.status}, upload ${u.status}`);
        await sleep(200);
      }
    } finally {
      await service.close();
      await pool.close();
    }
    expect(acked.length).toBeGreaterThan(1);
    expect(await stored(acked)).toBe(acked.length);
  }, 90_000);

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
      // More stuck sensor uploads than the pool has connections.
      const sensors = Array.from({ length: 12 }, () => timed(() => upload('sensor')));
      await sleep(200);
      for (let round = 0; round < 3; round++) {
        const checks = await Promise.all([
          timed(() => upload('pump', 'readings')),
          timed(() => upload('pump')),
          timed(() => upload('sensor', 'readings')),
          timed(health),
          timed(sites),
          timed(issueToken),
        ]);
        expect(checks.map((c) => ('res' in c.result ? c.result.res : c.result).statusCode)).toEqual(
          [201, 201, 201, 200, 200, 200],
        );
        for (const c of checks) expect(c.ms).toBeLessThan(1500);
        await sleep(300);
      }
      // A read of the locked table gives up at its deadline too.
      const raw = await timed(() =>
        app.inject({
          method: 'POST',
          url: '/v1/sensors/logs/raw',
          headers: bearer(token),
          payload: {
            sensorId: SENSOR,
            start: new Date(BASE).toISOString(),
            end: new Date(BASE + 86_400_000).toISOString(),
          },
        }),
      );
      expect(raw.result.statusCode).toBe(503);
      expect(raw.result.headers['retry-after']).toMatch(/^\d+$/);
      expect(raw.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
      for (const s of await Promise.all(sensors)) {
        expect(s.result.res.statusCode).toBe(500);
        expect(s.ms).toBeLessThanOrEqual(WRITE_TIMEOUT_MS);
      }
      // Cancelled, not left queued behind the lock on the server.
      await sleep(500);
      const [{ n }] = await direct.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [appName],
      );
      expect(n).toBe(0);
    } finally {
      unlock?.();
      await holding;
      await other.close();
    }
    expect((await upload('sensor')).res.statusCode).toBe(201);
  }, 60_000);

  it('recovers when its backends are terminated, and loses no acknowledged upload', async () => {
    const load = uploadLoad();
    await sleep(300);
    const [{ n }] = await direct.query<{ n: number }>(
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [appName],
    );
    expect(n).toBeGreaterThan(0);
    await sleep(300);
    await recovered();
    const { acked } = await load.stop();
    expect(acked.length).toBeGreaterThan(0);
    expect(await stored(acked)).toBe(acked.length);
    expect((await sites()).statusCode).toBe(200);
  }, 60_000);
});
