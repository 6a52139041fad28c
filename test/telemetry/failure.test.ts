import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, instrument, openTestDb, testSettings } from '../helper.js';
import { withinDeadline } from '../../src/db/deadline.js';
import { count, SENSOR } from './fixtures.js';

// The database fails under the service: 500 with the contract's error body (never a hang), and the
// service answers 201 again once the database is back. Connections of this file carry their own
// application_name, so the PostgreSQL case can cut exactly them.
const APP_NAME = `telemetry-failure-${randomBytes(4).toString('hex')}`;
process.env.PGAPPNAME = APP_NAME;

type Mode = 'ok' | 'fail' | 'hang';

/** The database, or one whose every statement fails with a lost connection, or never answers (until its deadline). */
function faulty(db: Database) {
  const state = { mode: 'ok' as Mode };
  const wrapped = instrument(db, (view, ms) => {
    const gate = <T>(run: () => Promise<T>): Promise<T> => {
      if (state.mode === 'hang') return withinDeadline(ms, () => new Promise<T>(() => {}));
      if (state.mode === 'fail')
        return Promise.reject(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
      return run();
    };
    return {
      query: (sql, params) => gate(() => view.query(sql, params)),
      transaction: (fn) => gate(() => view.transaction(fn)),
    };
  });
  return { db: wrapped, state };
}

describeEachBackend('telemetry upload when the database fails', (backend) => {
  let db: Database;
  let app: FastifyTypebox;
  let state: { mode: Mode };
  let token: string;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo());
    const f = faulty(db);
    state = f.state;
    // Long caches: the token's client and the equipment are known before the database goes away, so the
    // write itself meets the failure. WRITE_TIMEOUT_MS short: a stuck database answers 500 quickly.
    app = await buildApp(
      testSettings({ WRITE_TIMEOUT_MS: 400, CLIENT_CACHE_MS: 60_000, EQUIPMENT_CACHE_MS: 600_000 }),
      { db: f.db, logger: false },
    );
    await upsertClient(db, { clientId: 'edge', clientSecret: 'secret-123456', siteIds: '*' });
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
    await db?.close();
  });

  let minute = 0;
  const upload = async (path = 'logs/pump', id = 10401) => {
    const timestamp = new Date(Date.UTC(2026, 7, 1) + minute++ * 60_000).toISOString();
    const record = path.includes('sensor')
      ? { sensorID: id, value: 1, timestamp }
      : { sitePumpID: id, running: true, timestamp };
    const body = path === 'logs/generic' ? [record] : record;
    const res = await app.inject({
      method: 'POST',
      url: `/v1/edge/${path}`,
      headers: bearer(token),
      payload: body,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const errorBody = {
    statusCode: 500,
    error: 'Internal Server Error',
    message: expect.any(String),
  };

  it('answers 500 with the error body while the database refuses, and 201 again once it is back', async () => {
    expect((await upload()).status).toBe(201);
    expect((await upload('readings/sensor', SENSOR)).status).toBe(201);
    const stored = await count(db, 'pump_logs');
    state.mode = 'fail';
    for (const path of ['logs/pump', 'logs/generic', 'readings/sensor', 'logs/sensor']) {
      const res = await upload(path, path.includes('sensor') ? SENSOR : 10401);
      expect(res, path).toEqual({ status: 500, body: errorBody });
      expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|5432|SELECT|INSERT/);
    }
    const many = await Promise.all(Array.from({ length: 25 }, () => upload()));
    expect(many.map((r) => r.status)).toEqual(Array(25).fill(500));
    state.mode = 'ok';
    expect(await count(db, 'pump_logs')).toBe(stored);
    const again = await Promise.all(Array.from({ length: 25 }, () => upload()));
    expect(again.map((r) => r.status)).toEqual(Array(25).fill(201));
    expect(await count(db, 'pump_logs')).toBe(stored + 25);
  });

  it('answers 500 instead of hanging when the database does not answer, and recovers', async () => {
    state.mode = 'hang';
    const res = await Promise.all([upload(), upload('readings/sensor', SENSOR)]);
    expect(res).toEqual([
      { status: 500, body: errorBody },
      { status: 500, body: errorBody },
    ]);
    state.mode = 'ok';
    expect((await upload()).status).toBe(201);
  });

  it('answers 500 when the equipment lookup itself fails or hangs', async () => {
    for (const mode of ['fail', 'hang'] as const) {
      state.mode = mode;
      const res = await upload('logs/pump', 10402); // not looked up yet: not in the cache
      state.mode = 'ok';
      expect(res, mode).toEqual({ status: 500, body: errorBody });
    }
    expect((await upload('logs/pump', 10402)).status).toBe(201);
  });

  if (backend === 'postgres') {
    it('keeps serving when its database connections are terminated', async () => {
      await Promise.all(Array.from({ length: 8 }, () => db.query('SELECT pg_sleep(0.05)'))); // open several pooled connections
      const killed = await db.query<{ n: string }>(
        `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`,
        [APP_NAME],
      );
      expect(Number(killed[0].n)).toBeGreaterThan(0);
      const before = await count(db, 'pump_logs');
      const after = await Promise.all(Array.from({ length: 12 }, () => upload()));
      expect(after.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(await count(db, 'pump_logs')).toBe(before + 12);
    });
  }
});
