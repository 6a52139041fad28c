// Storage benchmark: bytes per sample of sensor logs as rows, of their rollups, and of the archive
// codec (src/telemetry/archive/codec.ts), on PostgreSQL with the service's own schema (migrations),
// tables never analyzed. Data: bench/storage-data.ts (100 sensors × 31 days, 3.16 M samples), loaded
// a day at a time in time order, every sensor's samples interleaved, as gateways send them; rollups
// built by rebuildAll. Then every sensor-day is encoded (each deflate level, to choose one), decoded
// and compared bit for bit, and stored in a scratch table (sensor_id, day, data bytea) with its key:
// the columnar reference. Then the service's archive pass moves every day into the archive
// (sensor_log_days) and their quarters and hours into sensor_rollup_days, every log and rollup unit is
// read back through them and compared, and the tables are measured again.
//   npx tsx bench/storage.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DAYS fewer days for a
// trial. Uses a schema of its own, dropped after.
import { randomBytes } from 'node:crypto';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { decodeDay, DEFAULT_LEVEL, encodeDay } from '../src/telemetry/archive/codec.js';
import { rollupRows as rollupUnits } from '../src/telemetry/archive/rollup-days.js';
import { UNITS } from '../src/telemetry/rollups/units.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { rebuildAll } from '../src/telemetry/rollups/refresh.js';
import { logRows } from '../src/telemetry/archive/days.js';
import { runArchive } from '../src/telemetry/archive/pass.js';
import { describeArchive } from '../src/telemetry/archive/report.js';
import { reportSection } from './harness.js';
import { record } from './record.js';
import {
  DAY_MS,
  DAYS,
  generateSensor,
  SENSORS,
  signalOf,
  START,
  type Signal,
} from './storage-data.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};
const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (b: number) => (b / 1048576).toFixed(1);

/** Loads the samples a day at a time, each day's rows in time order across sensors. Returns how many. */
async function load(db: Database): Promise<number> {
  const series = Array.from({ length: SENSORS }, (_, i) => generateSensor(i + 1));
  let total = 0;
  for (let d = 0; d < DAYS; d++) {
    const from = START + d * DAY_MS;
    const rows: { id: number; t: number; v: number }[] = [];
    for (const s of series)
      s.ts.forEach((t, i) => {
        if (t >= from && t < from + DAY_MS) rows.push({ id: s.id, t, v: s.values[i] });
      });
    rows.sort((a, b) => a.t - b.t || a.id - b.id);
    await db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value) SELECT * FROM unnest($1::int[], $2::timestamptz[], $3::float8[])`,
      [rows.map((r) => r.id), rows.map((r) => new Date(r.t).toISOString()), rows.map((r) => r.v)],
    );
    total += rows.length;
  }
  return total;
}

interface Sizes {
  total: number;
  heap: number;
  toast: number;
  indexes: { name: string; bytes: number }[];
}

/** The leaf relations of $1: its partitions, or itself when it is not partitioned (pg_partition_tree is then empty). */
const LEAVES = `SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf
  UNION ALL SELECT $1::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree($1::regclass))`;

/** Every byte of a table and of its partitions: heap (with its free-space and visibility maps), TOAST (with its index) and each index. */
async function sizes(db: Database, table: string): Promise<Sizes> {
  const [rel] = await db.query<{ total: string; heap: string; toast: string }>(
    `SELECT sum(pg_total_relation_size(c.oid)) AS total,
            sum(pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) AS heap,
            sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) AS toast
       FROM (${LEAVES}) p JOIN pg_class c ON c.oid = p.relid`,
    [table],
  );
  const indexes = await db.query<{ name: string; bytes: string }>(
    `SELECT i.indexrelid::regclass::text AS name,
            (SELECT sum(pg_relation_size(p.relid)) FROM (${LEAVES.replaceAll('$1::regclass', 'i.indexrelid')}) p) AS bytes
       FROM pg_index i WHERE i.indrelid = $1::regclass ORDER BY 1`,
    [table],
  );
  return {
    total: Number(rel.total),
    heap: Number(rel.heap),
    toast: Number(rel.toast),
    indexes: indexes.map((i) => ({ name: i.name, bytes: Number(i.bytes) })),
  };
}

function sayRelation(label: string, s: Sizes, samples: number): void {
  const per = (b: number) => (b / samples).toFixed(2);
  const idx = s.indexes.map((i) => `${i.name} ${mb(i.bytes)} MB (${per(i.bytes)})`).join(', ');
  say(
    `| ${label} | ${mb(s.total)} MB | **${per(s.total)}** | ${per(s.heap)} | ${per(s.toast)} | ${idx} |`,
  );
}

interface Day {
  id: number;
  day: number;
  ts: number[];
  values: number[];
}

/** Every sensor-day as stored, read back from the logs (times as exact epoch milliseconds). */
async function readDays(db: Database): Promise<Day[]> {
  const days: Day[] = [];
  for (let id = 1; id <= SENSORS; id++) {
    const rows = await db.query<{ ms: number; value: number }>(
      `SELECT (extract(epoch FROM ts) * 1000)::float8 AS ms, value FROM sensor_logs WHERE sensor_id = $1 ORDER BY ts`,
      [id],
    );
    let cur: Day | undefined;
    for (const r of rows) {
      const day = Math.floor(r.ms / DAY_MS);
      if (cur?.day !== day) days.push((cur = { id, day, ts: [], values: [] }));
      cur.ts.push(r.ms);
      cur.values.push(r.value);
    }
  }
  return days;
}

function encodeAll(days: Day[], level: number) {
  const t0 = process.hrtime.bigint();
  const data = days.map((d) => encodeDay('sensor', { ts: d.ts, columns: [d.values] }, { level }));
  return { data, s: seconds(t0), bytes: data.reduce((sum, b) => sum + b.length, 0) };
}

async function main() {
  await record('storage', {
    postgres: DB_URL,
    maintenance:
      'VACUUM FULL sensor_rollups once the archive pass is measured, to measure the rollup rows it leaves (the table as the pass left it is measured before)',
  });
  say(
    `Data: ${SENSORS} sensors × ${DAYS} days from ${new Date(START).toISOString().slice(0, 10)} (bench/storage-data.ts): 40 analog each minute (drifting level with noise, two decimals), 30 by exception (deadband 0.45, irregular times to the millisecond), 30 discrete each minute (0/1, about two changes a day).`,
  );
  say(
    'PostgreSQL, the service schema (migrations); loaded by one INSERT … SELECT FROM unnest a day, rows in time order; rollups by rebuildAll; no manual VACUUM or ANALYZE.',
  );
  const schema = `bench_storage_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(DB_URL, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    const db = await openPostgres(DB_URL, { schema, statementTimeoutMs: 3_600_000, max: 2 });
    await migrate(db);
    await new Partitions(db).cover(START + DAYS * DAY_MS);
    let t0 = process.hrtime.bigint();
    const samples = await load(db);
    const loadS = seconds(t0);
    t0 = process.hrtime.bigint();
    await rebuildAll(db);
    const rollupS = seconds(t0);
    say(
      `Loaded ${int(samples)} samples in ${loadS.toFixed(1)} s; rollups built in ${rollupS.toFixed(1)} s.`,
    );

    // ---- the codec, on what the logs hold ----
    const days = await readDays(db);
    const read = days.reduce((n, d) => n + d.ts.length, 0);
    if (read !== samples) throw new Error(`read back ${read} samples of ${samples}`);
    encodeAll(days, DEFAULT_LEVEL); // warm-up: the timed passes below all run optimized code
    const levels = [0, 1, 6, 9].map((level) => ({ level, ...encodeAll(days, level) }));
    const chosen = levels.find((l) => l.level === DEFAULT_LEVEL)!;
    t0 = process.hrtime.bigint();
    const decoded = chosen.data.map((b) => decodeDay('sensor', b));
    const decodeS = seconds(t0);
    let differ = 0;
    decoded.forEach((got, i) => {
      const want = days[i];
      for (let j = 0; j < want.ts.length; j++)
        if (!Object.is(got.ts[j], want.ts[j]) || !Object.is(got.columns[0][j], want.values[j]))
          differ++;
      if (got.ts.length !== want.ts.length) differ++;
    });

    await db.query(
      `CREATE TABLE sensor_archive_scratch (sensor_id integer, day date, data bytea, PRIMARY KEY (sensor_id, day))`,
    );
    for (let i = 0; i < days.length; i += 500) {
      const part = days.slice(i, i + 500);
      await db.query(
        `INSERT INTO sensor_archive_scratch SELECT * FROM unnest($1::int[], $2::date[], $3::bytea[])`,
        [
          part.map((d) => d.id),
          part.map((d) => new Date(d.day * DAY_MS).toISOString().slice(0, 10)),
          chosen.data.slice(i, i + 500),
        ],
      );
    }

    const logs = await sizes(db, 'sensor_logs');
    const rollups = await sizes(db, 'sensor_rollups');
    const archive = await sizes(db, 'sensor_archive_scratch');
    const [{ n: rollupRows }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sensor_rollups`,
    );

    say('');
    say(
      `Bytes per sample (${int(samples)} samples); every partition of a table counted, empty ones included:`,
    );
    say('');
    say('| relation | total | B/sample | heap | TOAST | indexes (B/sample) |');
    say('|---|---|---|---|---|---|');
    sayRelation('sensor_logs (rows)', logs, samples);
    sayRelation(
      `sensor_rollups (${int(rollupRows)} rows: quarters, hours, days)`,
      rollups,
      samples,
    );
    sayRelation(
      `codec in a table (${int(days.length)} sensor-days, level ${DEFAULT_LEVEL})`,
      archive,
      samples,
    );
    say('');
    say(
      `Archived sensor logs (codec table): ${(archive.total / samples).toFixed(2)} B/sample; target ≤ 4: ${archive.total / samples <= 4 ? 'met' : 'not met'}. Rows: ${(logs.total / samples).toFixed(2)}, rows and rollups: ${((logs.total + rollups.total) / samples).toFixed(2)}.`,
    );
    say(
      `Decoded ${int(samples)} samples, compared with Object.is: ${differ === 0 ? 'all identical' : `${differ} differ`}.`,
    );

    say('');
    say('| codec, every sensor-day | encoded bytes | B/sample | encode samples/s |');
    say('|---|---|---|---|');
    for (const l of levels)
      say(
        `| ${l.level ? `deflate level ${l.level}` : 'no deflate'}${l.level === DEFAULT_LEVEL ? ' (default)' : ''} | ${int(l.bytes)} | ${(l.bytes / samples).toFixed(3)} | ${int(samples / l.s)} |`,
      );
    say(
      `Decode (level ${DEFAULT_LEVEL}): ${int(samples / decodeS)} samples/s (${decodeS.toFixed(2)} s).`,
    );

    // ---- the service's archive: the pass over every day, then what is left ----
    say('');
    const before = await db.query<{ text: string }>(
      `SELECT string_agg(sensor_id || ' ' || ts || ' ' || encode(float8send(value), 'hex'), ',' ORDER BY sensor_id, ts) AS text FROM sensor_logs`,
    );
    const unitsText = `SELECT string_agg(x.level || ' ' || x.sensor_id || ' ' || x.bucket || ' ' || concat_ws(' ', ${UNITS.sensor.columns
      .map((c) =>
        c.type === 'float8' ? `encode(float8send(x.${c.name}), 'hex')` : `x.${c.name}::text`,
      )
      .join(', ')}), ',' ORDER BY x.level, x.sensor_id, x.bucket) AS text FROM (${[15, 60, 1440]
      .map(
        (level) =>
          `SELECT * FROM ${rollupUnits('sensor', { ids: 'IS NOT NULL', level, from: `'-infinity'::timestamptz`, to: `'infinity'::timestamptz` })} r`,
      )
      .join(' UNION ALL ')}) x`;
    const unitsBefore = await db.query<{ text: string }>(unitsText);
    // Rollup rows per signal, before the pass compacts the archived days' quarters and hours.
    const rollupRowsOf = new Map<Signal, number>();
    for (const r of await db.query<{ id: number; n: number }>(
      `SELECT sensor_id AS id, count(*)::int AS n FROM sensor_rollups GROUP BY 1`,
    ))
      rollupRowsOf.set(signalOf(r.id), (rollupRowsOf.get(signalOf(r.id)) ?? 0) + r.n);
    t0 = process.hrtime.bigint();
    const report = await runArchive(db, {
      days: 35,
      now: START + DAYS * DAY_MS + 36 * DAY_MS,
    });
    const archiveS = seconds(t0);
    const after = await db.query<{ text: string }>(
      `SELECT string_agg(sensor_id || ' ' || ts || ' ' || encode(float8send(value), 'hex'), ',' ORDER BY sensor_id, ts) AS text
         FROM ${logRows('sensor', { ids: 'IS NOT NULL' })} x`,
    );
    const same = before[0].text === after[0].text;
    const unitsAfter = await db.query<{ text: string }>(unitsText);
    const sameUnits = unitsBefore[0].text === unitsAfter[0].text && unitsAfter[0].text.length > 0;
    const logsAfter = await sizes(db, 'sensor_logs');
    const daysAfter = await sizes(db, 'sensor_log_days');
    const rollupsLeft = await sizes(db, 'sensor_rollups');
    const rollupDays = await sizes(db, 'sensor_rollup_days');
    // The rollup table is not partitioned: the pass's deletes leave their space in it, for the rollups
    // of later days to reuse once vacuumed (the table does not shrink). What the rows left (the days)
    // take is measured after rewriting the table.
    await db.query('VACUUM FULL sensor_rollups');
    const rollupsAfter = await sizes(db, 'sensor_rollups');
    const [{ n: rowsLeft }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sensor_rollups`,
    );
    say(
      `The archive pass (ARCHIVE_AFTER_DAYS=35, every day due): ${archiveS.toFixed(1)} s; ${describeArchive(report).join('; ')}.`,
    );
    say(
      `Every log read back through the archive (rows and archived days) compared with the rows before, to the bit: ${same ? 'identical' : 'DIFFERENT'}. Every rollup unit (quarters, hours, days; rows and archived units) likewise: ${sameUnits ? 'identical' : 'DIFFERENT'}.`,
    );
    say('');
    say('| relation, after the pass | total | B/sample | heap | TOAST | indexes (B/sample) |');
    say('|---|---|---|---|---|---|');
    sayRelation('sensor_logs (rows left)', logsAfter, samples);
    sayRelation('sensor_log_days (the archive)', daysAfter, samples);
    sayRelation(
      `sensor_rollups (as the pass left it: ${int(rowsLeft)} day rows, and the space of the rows it moved)`,
      rollupsLeft,
      samples,
    );
    sayRelation(
      `sensor_rollups (the ${int(rowsLeft)} day rows, the table rewritten)`,
      rollupsAfter,
      samples,
    );
    sayRelation('sensor_rollup_days (archived quarters and hours)', rollupDays, samples);
    // What each column of the archived quarters and hours takes, as stored (compressed where it was).
    const stored = [
      'b',
      ...UNITS.sensor.columns.flatMap((c) =>
        c.type === 'float8' ? [c.name, `${c.name}_m`] : [c.name],
      ),
    ];
    const [byColumn] = await db.query<Record<string, string>>(
      `SELECT ${stored.map((c) => `coalesce(sum(pg_column_size(${c})), 0)::text AS ${c}`).join(', ')},
              ${stored.map((c) => `count(pg_column_compression(${c}))::text AS ${c}_z`).join(', ')}, count(*)::text AS n
         FROM sensor_rollup_days`,
    );
    say(
      `sensor_rollup_days by column (B/sample as stored, with how many of its rows are compressed): ${stored
        .filter((c) => Number(byColumn[c]) > 0)
        .map(
          (c) =>
            `${c} ${(Number(byColumn[c]) / samples).toFixed(3)} (${byColumn[`${c}_z`]}/${byColumn.n})`,
        )
        .join(', ')}.`,
    );
    const archived = (logsAfter.total + daysAfter.total) / samples;
    const withRollups =
      (logsAfter.total + daysAfter.total + rollupsAfter.total + rollupDays.total) / samples;
    say('');
    say(
      `Archived sensor logs: ${archived.toFixed(2)} B/sample (target ≤ 4: ${archived <= 4 ? 'met' : 'not met'}); archived logs and their rollups (the rows left rewritten): ${withRollups.toFixed(2)} B/sample (target ≤ 6: ${withRollups <= 6 ? 'met' : 'not met'}); the columnar reference (the codec above): ${(chosen.bytes / samples).toFixed(2)}.`,
    );

    say('');
    say(
      `| signal | samples | encoded B/sample (level ${DEFAULT_LEVEL}) | rollup rows a sample before the archive (${(rollups.heap / rollupRows).toFixed(0)} B of heap a row on average) |`,
    );
    say('|---|---|---|---|');
    const by = new Map<Signal, { n: number; bytes: number }>();
    days.forEach((d, i) => {
      const s = by.get(signalOf(d.id)) ?? { n: 0, bytes: 0 };
      s.n += d.ts.length;
      s.bytes += chosen.data[i].length;
      by.set(signalOf(d.id), s);
    });
    for (const [signal, s] of by)
      say(
        `| ${signal} | ${int(s.n)} | ${(s.bytes / s.n).toFixed(3)} | ${((rollupRowsOf.get(signal) ?? 0) / s.n).toFixed(3)} |`,
      );
    await db.close();
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
  reportSection('Storage', lines.join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
