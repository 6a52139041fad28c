import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, instrument, openTestDb, testSettings } from '../helper.js';
import { minutesAgo, openCount, SENSOR, SITE2_SENSOR, TANK } from './fixtures.js';

const SITE2_TANK = TANK + 10_000; // demo ids are site * 10000 + n

/** A database whose upserts of alarms are counted while in flight, to show that requests really overlapped. */
function tracked(db: Database) {
  const stats = { inFlight: 0, peak: 0 };
  const counted = instrument(db, (view) => ({
    query: async (sql, params) => {
      const upsert = sql.includes('INSERT INTO site_alarms');
      if (upsert) stats.peak = Math.max(stats.peak, ++stats.inFlight);
      try {
        return await view.query(sql, params);
      } finally {
        if (upsert) stats.inFlight--;
      }
    },
  }));
  return { db: counted, stats };
}

describeEachBackend('alarms under concurrency', (backend) => {
  let db: Database;
  let second: Database | undefined;
  const apps: FastifyTypebox[] = [];
  const stats: { peak: number }[] = [];
  let token: string;

  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 1, imagesPerSite: 0 }));
    const pools = [db];
    if (backend === 'postgres') {
      // A second instance with its own pool of 10 on the same schema: two services behind a balancer.
      const [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
      second = await openPostgres(process.env.TEST_DATABASE_URL!, { schema });
      pools.push(second);
    }
    for (const pool of pools) {
      const t = tracked(pool);
      stats.push(t.stats);
      const app = await buildApp(testSettings(), { db: t.db, logger: false });
      await app.ready();
      apps.push(app);
    }
    await upsertClient(db, { clientId: 'gateway', clientSecret: 'secret-123456', siteIds: '*' });
    token = (
      await apps[0].inject({
        method: 'POST',
        url: '/token',
        payload: { clientId: 'gateway', clientSecret: 'secret-123456' },
      })
    ).json().accessToken;
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await second?.close();
    await db?.close();
  });

  /** POSTs all at once, spread over the app instances; resolves when every answer is in. */
  const postAll = (url: string, bodies: unknown[]) =>
    Promise.all(
      bodies.map(async (payload, i) => {
        const res = await apps[i % apps.length].inject({
          method: 'POST',
          url: `/v1/edge/${url}`,
          headers: bearer(token),
          payload: payload as object,
        });
        return { status: res.statusCode, body: res.json() };
      }),
    );
  const resetPeaks = () => stats.forEach((s) => (s.peak = 0));
  const overlapped = () => Math.max(...stats.map((s) => s.peak));

  it('60 concurrent sends of one alarm and 60 of one site alarm make exactly one open alarm each, Occurrences = sends', async () => {
    resetPeaks();
    const N = 120; // 60 per key
    const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 12) - m * 60_000).toISOString();
    const sends = Array.from({ length: N }, (_, i) =>
      i % 2
        ? {
            siteId: 1,
            sensorID: SENSOR,
            alarmType: 'Race',
            message: `send ${i}`,
            timestamp: at(i % 7),
          }
        : { siteId: 1, alarmType: 'RaceSite', message: `send ${i}`, timestamp: at(i % 5) },
    );
    const results = await postAll('alarms', sends);
    expect(results.every((r) => r.status === 201)).toBe(true);
    for (const [type, parity] of [
      ['Race', 1],
      ['RaceSite', 0],
    ] as const) {
      const mine = results.filter((_, i) => i % 2 === parity).map((r) => r.body);
      expect(mine.filter((b) => b.status === 'created')).toHaveLength(1);
      expect(new Set(mine.map((b) => b.SiteAlarmLogID)).size).toBe(1);
      expect(await openCount(db, 1, type)).toBe(1);
      const rows = await db.query<{
        id: string;
        occurrences: number;
        first_seen: Date;
        last_seen: Date;
      }>(
        `SELECT alarm_id::text AS id, occurrences, first_seen, last_seen FROM site_alarms WHERE site_id = 1 AND alarm_type = $1`,
        [type],
      );
      expect(rows).toEqual([
        {
          id: mine[0].SiteAlarmLogID,
          occurrences: N / 2,
          first_seen: expect.any(Date),
          last_seen: expect.any(Date),
        },
      ]);
      expect([rows[0].first_seen, rows[0].last_seen].map((d) => new Date(d).toISOString())).toEqual(
        [at(parity ? 6 : 4), at(0)],
      );
    }
    // PGlite runs one statement at a time; PostgreSQL must have had upserts in flight together.
    if (backend === 'postgres') expect(overlapped()).toBeGreaterThan(1);
    console.log(
      `[${backend}] most alarm upserts issued and not yet answered at once, on one instance: ${overlapped()}`,
    );
  });

  it('concurrent batches sharing keys in different orders neither deadlock nor split an alarm', async () => {
    resetPeaks();
    const keys = ['K1', 'K2', 'K3', 'K4', 'K5'];
    const batches = Array.from({ length: 12 }, (_, b) => ({
      siteId: 2,
      alarms: keys.map((_, i) => ({
        alarmType: keys[(i + b) % keys.length],
        siteTankGroupID: SITE2_TANK,
        message: `batch ${b}`,
        timestamp: minutesAgo(b),
      })),
    }));
    const results = await postAll('alarms/batch', batches);
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const rows = await db.query<{ alarm_type: string; occurrences: number }>(
      `SELECT alarm_type, occurrences FROM site_alarms WHERE site_id = 2 AND alarm_type LIKE 'K_' ORDER BY alarm_type`,
    );
    expect(rows).toEqual(keys.map((k) => ({ alarm_type: k, occurrences: 12 })));
    expect(results.flatMap((r) => r.body).filter((b) => b.status === 'created')).toHaveLength(
      keys.length,
    );
    if (backend === 'postgres') expect(overlapped()).toBeGreaterThan(1);
  });

  it('two concurrent resolves of one alarm: one resolved, one already_resolved', async () => {
    for (let round = 0; round < 8; round++) {
      const [sent] = await postAll('alarms', [
        { siteId: 1, alarmType: 'DoubleResolve', message: 'm', timestamp: minutesAgo(1) },
      ]);
      const id = sent.body.SiteAlarmLogID;
      const answers = await postAll('alarms/resolve', [
        { siteId: 1, alarms: [{ SiteAlarmLogID: id, note: 'a' }] },
        { siteId: 1, alarms: [{ SiteAlarmLogID: id, note: 'b' }] },
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers.map((a) => a.body[0].status).sort()).toEqual(['already_resolved', 'resolved']);
      expect(await openCount(db, 1, 'DoubleResolve')).toBe(0);
    }
  });

  it('sends racing with resolves lose no send and never leave two open alarms', async () => {
    const N = 50;
    const alarm = { siteId: 1, sensorID: SENSOR, alarmType: 'Flapping', message: 'm' };
    const work: Promise<unknown>[] = [];
    const resolves: Promise<{ body: { status: string }[] }[]>[] = [];
    // Waves of 10 sends; once the first of a wave is answered, the open alarm is resolved while the rest are in flight.
    for (let wave = 0; wave < N / 10; wave++) {
      const sends = Array.from({ length: 10 }, () =>
        postAll('alarms', [{ ...alarm, timestamp: minutesAgo(0) }]),
      );
      work.push(...sends);
      await Promise.race(sends);
      const open = await db.query<{ id: string }>(
        `SELECT alarm_id::text AS id FROM site_alarms WHERE alarm_type = 'Flapping' AND resolved_at IS NULL`,
      );
      if (open.length)
        resolves.push(
          postAll('alarms/resolve', [
            { siteId: 1, alarms: open.map((o) => ({ SiteAlarmLogID: o.id })) },
          ]),
        );
    }
    const answers = (await Promise.all(work)).flat() as { status: number }[];
    expect(answers.map((a) => a.status)).toEqual(Array(N).fill(201));
    expect(
      (await Promise.all(resolves)).flat().filter((r) => r.body[0].status === 'resolved').length,
    ).toBeGreaterThan(0);
    const [sum] = await db.query<{ sends: number; open: number; alarms: number }>(
      `SELECT sum(occurrences)::int AS sends, count(*) FILTER (WHERE resolved_at IS NULL)::int AS open, count(*)::int AS alarms
         FROM site_alarms WHERE alarm_type = 'Flapping'`,
    );
    expect(sum.sends).toBe(N);
    expect(sum.open).toBeLessThanOrEqual(1);
    expect(sum.alarms).toBeGreaterThanOrEqual(1);
  });

  it('the database itself refuses a second open alarm of a key (site alarms included), and admits one after resolution', async () => {
    const insert = (equipment: [number, number] | [null, null]) =>
      db.query(
        `INSERT INTO site_alarms (site_id, equipment_type_id, equipment_id, alarm_type, severity, message, first_seen, last_seen)
         VALUES (2, $1, $2, 'Direct', 'major', 'm', now(), now())`,
        equipment,
      );
    for (const equipment of [
      [5, SITE2_SENSOR],
      [null, null],
    ] as const) {
      await insert([...equipment] as [number, number]);
      await expect(insert([...equipment] as [number, number])).rejects.toMatchObject({
        code: '23505',
      });
      await db.query(
        `UPDATE site_alarms SET resolved_at = now() WHERE alarm_type = 'Direct' AND resolved_at IS NULL`,
      );
      await insert([...equipment] as [number, number]);
      await db.query(
        `UPDATE site_alarms SET resolved_at = now() WHERE alarm_type = 'Direct' AND resolved_at IS NULL`,
      );
    }
    // Half an equipment reference, or a note without a resolution, is refused too.
    await expect(
      db.query(
        `INSERT INTO site_alarms (site_id, equipment_type_id, alarm_type, severity, message, first_seen, last_seen) VALUES (2, 5, 'Half', 'major', 'm', now(), now())`,
      ),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      db.query(
        `INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen, resolve_note) VALUES (2, 'Note', 'major', 'm', now(), now(), 'x')`,
      ),
    ).rejects.toMatchObject({ code: '23514' });
  });
});
