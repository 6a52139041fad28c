// Rollup refresh speed: 500 sensors x 2 days of one-minute logs (1.44 M rows) marked stale as a bulk
// load marks them (markAll), then refreshed in batches of 2,000 marks as the background refresher
// does; prints the time of each part (taking the marks, quarters from logs, hours, days).
//   npx tsx bench/refresh.ts      (schema rprobe, dropped after)
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); BENCH_ANALYZE=1 runs
// VACUUM ANALYZE after the load (by default the tables are as the service and autovacuum leave them).
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { markAll, refreshMarked } from '../src/telemetry/rollups/refresh.js';
import { UNITS } from '../src/telemetry/rollups/units.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ANALYZE = process.env.BENCH_ANALYZE === '1';
await record('refresh', {
  postgres: DB_URL,
  maintenance: ANALYZE ? 'VACUUM ANALYZE after the load (BENCH_ANALYZE=1)' : undefined,
});
const admin = await openPostgres(DB_URL, { max: 1 });
await admin.query('DROP SCHEMA IF EXISTS rprobe CASCADE');
await admin.query('CREATE SCHEMA rprobe');
const db = await openPostgres(DB_URL, { schema: 'rprobe' });
await migrate(db);
const doc = generateDemo({ sites: 50, transactionsPerSite: 0, imagesPerSite: 0 });
await importDocument(db, doc);
await new Partitions(db).cover(Date.now());
const ids = doc.sensors!.map((s) => s.SiteSensorID as number).slice(0, 500);
const start = new Date(Date.now() - 40 * 86_400_000);
start.setUTCHours(0, 0, 0, 0);
await db.query(
  `INSERT INTO sensor_logs (sensor_id, ts, value) SELECT s, g, random() FROM unnest($1::int[]) s, generate_series($2::timestamptz, $2::timestamptz + interval '2 days' - interval '1 minute', interval '1 minute') g`,
  [ids, start.toISOString()],
);
if (ANALYZE) await db.query('VACUUM ANALYZE');
await markAll(db, UNITS.sensor);
const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM rollup_dirty');
console.log('marks', n);
const times: number[] = [0, 0, 0, 0];
const timedDb = {
  ...db,
  transaction: (fn: any) =>
    db.transaction((tx) => {
      let i = 0;
      return fn({
        ...tx,
        query: async (sql: string, params: unknown[]) => {
          const t = performance.now();
          try {
            return await tx.query(sql, params);
          } finally {
            times[i++ % 4] += performance.now() - t;
          }
        },
      });
    }),
} as typeof db;
let total = 0,
  batches = 0;
const t0 = performance.now();
for (;;) {
  const t = performance.now();
  const k = await refreshMarked(timedDb, UNITS.sensor, 2000);
  if (!k) break;
  total += k;
  batches++;
  if (batches <= 3)
    console.log(`batch ${batches}: ${k} marks in ${(performance.now() - t).toFixed(0)} ms`);
}
console.log('delete marks, quarters, hours, days (ms):', times.map((x) => x.toFixed(0)).join(', '));
console.log(`${total} marks (${total * 15} log rows) in ${(performance.now() - t0).toFixed(0)} ms`);
await db.close();
await admin.query('DROP SCHEMA rprobe CASCADE');
await admin.close();
