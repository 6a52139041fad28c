// The rollup marks as a queue, where no autovacuum runs: 2 million marks put in and taken by the
// refresher's own function (refreshMarked) 5,000 at a time, first without any VACUUM (the service
// before it vacuumed its queue tables), then with the service's QueueVacuum (src/db/vacuum.ts), each
// in a fresh schema. Every 50 rounds it prints the time of a take of 5,000 marks, of a take that finds
// none (what the refresher does every second on an idle service), of the VACUUM when one ran, and the
// sizes of the table and its index.
//   npx tsx bench/queue-vacuum.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_ROUNDS (default
// 400). The schemas (qvprobe) are dropped after.
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { QueueVacuum, VACUUM_AFTER_ROWS } from '../src/db/vacuum.js';
import { refreshMarked } from '../src/telemetry/rollups/refresh.js';
import { UNITS } from '../src/telemetry/rollups/units.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 400);
const MARKS = 5000;
await record('queue-vacuum', { postgres: DB_URL });
const admin = await openPostgres(DB_URL, { max: 1 });

async function run(vacuum: boolean) {
  await admin.query('DROP SCHEMA IF EXISTS qvprobe CASCADE');
  await admin.query('CREATE SCHEMA qvprobe');
  const db = await openPostgres(DB_URL, { schema: 'qvprobe' });
  try {
    await migrate(db);
    const queue = new QueueVacuum(db, 'rollup_dirty', vacuum ? VACUUM_AFTER_ROWS : Infinity);
    console.log(
      `\n${vacuum ? `with the service's VACUUM every ${VACUUM_AFTER_ROWS.toLocaleString('en-US')} marks taken` : 'without VACUUM'}:`,
    );
    console.log(
      '| marks taken so far | take of 5,000 ms | take finding none ms | VACUUM ms | table | index |',
    );
    console.log('|---|---|---|---|---|---|');
    let vacuumMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // 5,000 marks of quarters long ended, new keys every round (500 sensors x 10 quarters).
      await db.query(
        `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
           SELECT 1, 1000 + g % 500, to_timestamp(1735689600 + ($1::float8 * ${MARKS} + g) / 500 * 900)
             FROM generate_series(0, ${MARKS - 1}) g`,
        [round],
      );
      const t0 = performance.now();
      const taken = await refreshMarked(db, UNITS.sensor, MARKS, true);
      const took = performance.now() - t0;
      const v0 = performance.now();
      if (await queue.note(taken)) vacuumMs.push(performance.now() - v0);
      if (round % 50 === 49) {
        const e0 = performance.now();
        const none = await refreshMarked(db, UNITS.sensor, MARKS, true);
        const empty = performance.now() - e0;
        if (none) throw new Error('marks left');
        const [s] = await db.query<{ t: string; i: string }>(
          `SELECT pg_size_pretty(pg_relation_size('rollup_dirty')) AS t, pg_size_pretty(pg_relation_size('rollup_dirty_pkey')) AS i`,
        );
        const v = vacuumMs.length
          ? `${(vacuumMs.reduce((a, b) => a + b, 0) / vacuumMs.length).toFixed(1)} (mean of ${vacuumMs.length})`
          : '–';
        console.log(
          `| ${((round + 1) * MARKS).toLocaleString('en-US')} | ${took.toFixed(1)} | ${empty.toFixed(1)} | ${v} | ${s.t} | ${s.i} |`,
        );
        vacuumMs = [];
      }
    }
  } finally {
    await db.close();
  }
}

try {
  await run(false);
  await run(true);
} finally {
  await admin.query('DROP SCHEMA IF EXISTS qvprobe CASCADE');
  await admin.close();
}
