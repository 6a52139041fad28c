import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeWith, openTestDb, testSettings, uniqueAddress } from '../helper.js';
import { openStream, closeStreams } from '../stream/fixtures.js';

// Two instances as behind a load balancer, over HTTP: one PostgreSQL (each instance its own pool)
// and one Redis. Uploads through either are read through either, a reading through one reaches the
// stream subscribers of the other, and the rate limit is one count across both. (The stream's
// resume and shutdown across instances: test/stream/instances.test.ts.) PostgreSQL with Redis
// only: the embedded database belongs to one process.

const redisUrl = process.env.TEST_REDIS_URL;
const SENSOR = 10101; // demo ids: site * 10000 + n
const LIMIT = 40;

describeWith(
  ['postgres', 'redis'],
  'two instances on one PostgreSQL and one Redis [postgres]',
  () => {
    let db: Database;
    let second: Database;
    const apps: FastifyTypebox[] = [];
    const bases: string[] = [];
    const secret = 'secret-123456';
    beforeAll(async () => {
      db = await openTestDb('postgres');
      await importDocument(
        db,
        generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }),
      );
      const [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
      second = await openPostgres(process.env.TEST_DATABASE_URL!, { schema });
      for (const pool of [db, second]) {
        const app = await buildApp(
          testSettings({
            REDIS_URL: redisUrl,
            RATE_LIMIT_MAX: LIMIT,
            RATE_LIMIT_WINDOW_MS: 60_000,
          }),
          { db: pool, logger: false },
        );
        bases.push(await app.listen({ port: 0, host: '127.0.0.1' }));
        apps.push(app);
      }
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      await second?.close();
      await db?.close();
    });
    afterEach(closeStreams);

    /**
     * A new client (the rate limit counts per client; ids are fresh for every run, Redis outlives
     * it) and its token from instance 0, asked from an address of its own: POST /token counts per
     * IP, in the Redis every other run and suite on this machine shares.
     */
    const newClient = async () => {
      const clientId = `two-${randomBytes(4).toString('hex')}`;
      await upsertClient(db, { clientId, clientSecret: secret, siteIds: '*' });
      const res = await apps[0].inject({
        method: 'POST',
        url: '/token',
        remoteAddress: uniqueAddress(),
        payload: { clientId, clientSecret: secret },
      });
      expect(res.statusCode).toBe(200);
      return res.json().accessToken as string;
    };
    const call = (via: number, token: string, method: string, path: string, body?: unknown) =>
      fetch(`${bases[via]}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });

    it('stores uploads through either instance and reads them through either', async () => {
      const token = await newClient();
      const start = Date.UTC(2026, 5, 1);
      const at = (m: number) => new Date(start + m * 60_000).toISOString();
      for (let m = 0; m < 6; m++) {
        const res = await call(m % 2, token, 'POST', '/v1/edge/logs/sensor', {
          sensorID: SENSOR,
          value: m,
          timestamp: at(m),
        });
        expect(res.status).toBe(201);
      }
      for (const via of [0, 1]) {
        const res = await call(via, token, 'POST', '/v1/sensors/logs/raw', {
          sensorId: SENSOR,
          start: at(0),
          end: at(6),
        });
        expect(res.status).toBe(200);
        expect((await res.json()).map((r: { value: number }) => r.value)).toEqual([
          0, 1, 2, 3, 4, 5,
        ]);
      }
    });

    it('delivers a reading uploaded through one instance to the stream subscribers of the other, both ways', async () => {
      const token = await newClient();
      const streams = bases.map((base) => openStream(base, token, { siteIds: '1' }));
      try {
        for (const s of streams) await s.next((e) => e.type === 'snapshot');
        for (const [via, to] of [
          [0, 1],
          [1, 0],
        ]) {
          const value = 1000 + via;
          const res = await call(via, token, 'POST', '/v1/edge/readings/sensor', {
            sensorID: SENSOR,
            value,
            timestamp: new Date(Date.now() + via).toISOString(),
          });
          expect(res.status).toBe(201);
          const got = await streams[to].next(
            (e) => e.type === 'reading' && e.data.record.value === value,
          );
          expect(got.data).toMatchObject({ siteId: 1, kind: 'sensor' });
        }
      } finally {
        streams.forEach((s) => s.close());
      }
    });

    it('counts one rate limit across both instances', async () => {
      const token = await newClient();
      const remaining: number[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const res = await call(i % 2, token, 'GET', '/v1/sites?page=1&perPage=1');
        expect(res.status).toBe(200);
        remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
      }
      expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
      for (const via of [0, 1]) {
        const res = await call(via, token, 'GET', '/v1/sites?page=1&perPage=1');
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      }
    });
  },
);
