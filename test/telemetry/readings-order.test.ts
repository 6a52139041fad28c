import fc from 'fast-check';
import pg from 'pg';
import { expect, it } from 'vitest';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';
import { describeEachBackend, describeWith } from '../helper.js';
import { countingWriter, suiteApp } from './fixtures.js';
import { until } from '../wait.js';

// Readings of one equipment that go to the database in one statement (a busy site's gateway sends
// each sensor again within milliseconds) count, and replace the current value, exactly as if they
// had come one after another: a reading replaces the current value unless it is older, and at the
// same time only if its record differs.

/** Demo sensors of site 1. */
const SENSORS = [10100, 10101, 10102, 10103];
const BASE = Date.UTC(2026, 6, 1);
const soon = () => Date.now() + 10_000;

interface Reading {
  id: number;
  /** Seconds after BASE. */
  s: number;
  value: number;
}

const entryOf = (r: Reading): Entry => ({
  kind: 'sensor',
  id: r.id,
  ts: BASE + r.s * 1000,
  values: [],
  record: {
    siteSensorID: r.id,
    value: r.value,
    timestamp: new Date(BASE + r.s * 1000).toISOString(),
  },
  index: 0,
  site: 1,
});

/** The rule, one reading after another: what each stores, and the current values at the end. */
function model(initial: Map<number, Reading>, jobs: Reading[][]) {
  const current = new Map(initial);
  const stored = jobs.map((job) =>
    job.filter((r) => {
      const held = current.get(r.id);
      if (held && (r.s < held.s || (r.s === held.s && r.value === held.value))) return false;
      current.set(r.id, r);
      return true;
    }),
  );
  return { stored, current };
}

describeEachBackend('readings of one equipment in one statement', (backend) => {
  const t = suiteApp(backend);

  /** A writer that writes one group at a time, and the statements it sent. */
  const writer = () => countingWriter(t.ctx.db, { group: true, maxInFlight: 1, maxPerLane: 1 });

  const reading = fc.record({
    id: fc.constantFrom(...SENSORS),
    s: fc.integer({ min: 0, max: 3 }),
    value: fc.integer({ min: 1, max: 2 }),
  });
  /** Requests of 1 to 3 readings, each of other equipment (a request keeps one reading per equipment). */
  const request = fc.uniqueArray(reading, { minLength: 1, maxLength: 3, selector: (r) => r.id });

  it('count and replace as one after another, for any order, times and records (property)', async () => {
    const forms = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(reading, { maxLength: 4 }),
        fc.oneof(
          fc.array(request, { minLength: 2, maxLength: 12 }),
          // Each equipment once in the group (the statement then takes another form).
          fc
            .uniqueArray(reading, {
              minLength: 1,
              maxLength: SENSORS.length,
              selector: (r) => r.id,
            })
            .map((rs) => rs.map((r) => [r])),
        ),
        async (before, jobs) => {
          const db = t.ctx.db;
          await db.query(`DELETE FROM current_readings WHERE equipment_id = ANY($1::int[])`, [
            SENSORS,
          ]);
          const initial = new Map<number, Reading>();
          for (const r of before) initial.set(r.id, r);
          for (const r of initial.values())
            await db.query(
              `INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record)
               VALUES ('sensor', $1, 1, $2, $3::jsonb)`,
              [r.id, new Date(BASE + r.s * 1000).toISOString(), JSON.stringify(entryOf(r).record)],
            );
          const [{ last }] = await db.query<{ last: string }>(
            `SELECT coalesce(max(id), 0)::text AS last FROM stream_events`,
          );

          const { writer: w, sent } = await writer();
          const counts = await Promise.all(
            jobs.map((job) => w.submit(makeJob('reading', job.map(entryOf), [1]), soon())),
          );
          const expected = model(initial, jobs);
          // All in one statement: nothing waited for a second one.
          expect(sent).toHaveLength(1);
          forms.add(/WITH ORDINALITY/.test(sent[0]) ? 'in order' : 'each once');
          expect(counts).toEqual(
            expected.stored.map((s, i) => ({
              received: jobs[i].length,
              stored: s.length,
              duplicates: jobs[i].length - s.length,
            })),
          );
          const rows = await db.query<{ id: number; ts: Date; record: { value: number } }>(
            `SELECT equipment_id AS id, ts, record FROM current_readings
              WHERE equipment_id = ANY($1::int[]) ORDER BY equipment_id`,
            [SENSORS],
          );
          expect(rows.map((r) => [r.id, r.ts.getTime(), r.record.value])).toEqual(
            [...expected.current.values()]
              .sort((a, b) => a.id - b.id)
              .map((r) => [r.id, BASE + r.s * 1000, r.value]),
          );
          // One event per stored reading; each equipment's in the order they replaced one another.
          const events = await db.query<{ data: string }>(
            `SELECT data FROM stream_events WHERE id > $1::bigint AND type = 'reading' ORDER BY id`,
            [last],
          );
          const seen = events.map(
            (e) =>
              JSON.parse(e.data).record as {
                siteSensorID: number;
                value: number;
                timestamp: string;
              },
          );
          const of = (id: number) => seen.filter((r) => r.siteSensorID === id);
          for (const id of SENSORS)
            expect(of(id)).toEqual(
              expected.stored
                .flat()
                .filter((r) => r.id === id)
                .map((r) => entryOf(r).record),
            );
          expect(seen).toHaveLength(expected.stored.flat().length);
        },
      ),
      { numRuns: backend === 'pglite' ? 40 : 60 },
    );
    // Both forms of the statement were written and checked.
    expect([...forms].sort()).toEqual(['each once', 'in order']);
  });
});

// PostgreSQL only: PGlite runs one statement at a time, so no two can race.
describeWith(['postgres'], 'readings racing for a first current value [postgres]', () => {
  const t = suiteApp('postgres');

  it('repeats a statement whose equipment got its first current value from another one meanwhile', async () => {
    const NEW = SENSORS[0];
    const HELD = SENSORS[1];
    const db = t.ctx.db;
    await db.query(`DELETE FROM current_readings WHERE equipment_id = ANY($1::int[])`, [SENSORS]);
    await db.query(
      `INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record)
       VALUES ('sensor', $1, 1, $2, '{}'::jsonb)`,
      [HELD, new Date(BASE).toISOString()],
    );
    const { writer: w, sent } = await countingWriter(db, {
      group: true,
      maxInFlight: 2,
      maxPerLane: 2,
    });

    // Another connection holds HELD's current row: the first statement waits for it after it has
    // taken its snapshot, in which NEW has no current value.
    const holder = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query(`SET search_path = ${await schemaOf()}`);
      await holder.query('BEGIN');
      await holder.query(
        `SELECT 1 FROM current_readings WHERE equipment_kind = 'sensor' AND equipment_id = $1 FOR UPDATE`,
        [HELD],
      );
      // Two requests together, HELD in both: one statement that takes readings in order.
      const first = Promise.all([
        w.submit(
          makeJob(
            'reading',
            [entryOf({ id: NEW, s: 2, value: 1 }), entryOf({ id: HELD, s: 1, value: 1 })],
            [1],
          ),
          soon(),
        ),
        w.submit(makeJob('reading', [entryOf({ id: HELD, s: 2, value: 2 })], [1]), soon()),
      ]);
      await until(async () => (await lockWaits()) > 0);
      // Meanwhile a second statement writes NEW's first current value, older than the first's.
      const second = await w.submit(
        makeJob('reading', [entryOf({ id: NEW, s: 1, value: 7 })], [1]),
        soon(),
      );
      expect(second).toEqual({ received: 1, stored: 1, duplicates: 0 });
      await holder.query('COMMIT');
      // The first statement found NEW's row there after all, wrote nothing, and was written again.
      expect(await first).toEqual([
        { received: 2, stored: 2, duplicates: 0 },
        { received: 1, stored: 1, duplicates: 0 },
      ]);
      expect(sent).toHaveLength(3);
      const rows = await db.query<{ id: number; value: number }>(
        `SELECT equipment_id AS id, (record->>'value')::int AS value FROM current_readings
          WHERE equipment_id = ANY($1::int[]) ORDER BY equipment_id`,
        [[NEW, HELD]],
      );
      expect(rows).toEqual([
        { id: NEW, value: 1 },
        { id: HELD, value: 2 },
      ]);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
    }

    async function schemaOf() {
      const [{ s }] = await db.query<{ s: string }>(`SELECT current_schema() AS s`);
      return `"${s}"`;
    }
    async function lockWaits() {
      const [{ n }] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%current_readings%'`,
      );
      return n;
    }
  });
});
