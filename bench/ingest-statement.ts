// Where a batch upload's time goes in the database (issue 21): the same 1,000 rows (10 sensors ×
// 100 minutes, new keys each time) written one batch at a time on one connection, in turns, by
//   - COPY … FROM STDIN (text), as bench/ingest's raw baseline writes them, but 1,000 rows at a time;
//   - the same in COPY's binary format (no text to parse: what a service could send instead of its
//     INSERT, were COPY the cheaper way for batches of this size);
//   - a plain INSERT … SELECT FROM unnest(…);
//   - the service's own statement (src/telemetry/statement.ts, insert mode, binary arrays): the
//     logs, their rollup marks, the live stream's event and the site's LastCommunication.
// Statements are prepared as the service prepares them: one name per text (the text differs with the
// quarters a batch rolls up). What each way sends is made before it is timed. Each in transactions of 20 batches (so the commit's flush is shared, as bench/ingest's one COPY
// shares it), then each batch committed alone. No HTTP, no service process: the database's part only,
// as wall time and as the CPU time of the database's backend process (from /proc, when PostgreSQL runs
// on this machine).
//   npx tsx bench/ingest-statement.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_BATCHES per way
// (default 200). BENCH_COMPARE_ROOT=<another checkout> adds that checkout's statement as a fourth way,
// in the same turns. Uses a schema of its own, dropped after.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { statementName } from '../src/db/postgres-statement.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { makeJob } from '../src/telemetry/jobs.js';
import type { Entry } from '../src/telemetry/kinds.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { buildStatement } from '../src/telemetry/statement.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const OTHER_ROOT = process.env.BENCH_COMPARE_ROOT;
/** The other checkout's statement builder, and the commit it is at. */
const other = OTHER_ROOT
  ? {
      build: (
        (await import(join(OTHER_ROOT, 'src/telemetry/statement.ts'))) as {
          buildStatement: typeof buildStatement;
        }
      ).buildStatement,
      commit: (await import('node:child_process'))
        .execFileSync('git', ['-C', OTHER_ROOT, 'log', '-1', '--format=%h'], { encoding: 'utf8' })
        .trim(),
    }
  : undefined;
await record('ingest-statement', { postgres: DB_URL });
const schema = `bench_stmt_${randomBytes(4).toString('hex')}`;
const admin = await openPostgres(DB_URL, { max: 1 });
await admin.query(`CREATE SCHEMA ${schema}`);
const db = await openPostgres(DB_URL, { schema });
const client = new pg.Client({
  connectionString: DB_URL,
  options: `-c search_path=${schema} -c jit=off`,
});
try {
  await migrate(db);
  await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }));
  const sensors = await db.query<{ id: number; site: number }>(
    `SELECT sensor_id AS id, site_id AS site FROM sensors ORDER BY sensor_id LIMIT 10`,
  );
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  /** CPU ms the backend has used (user + system), or NaN when its process is not on this machine. */
  const backendCpu = () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return NaN;
    }
  };
  const base = Math.floor((Date.now() - 50 * 86_400_000) / 60_000) * 60_000;
  // Months up to the last minute written: each batch takes the next 100 minutes, up to four ways twice.
  await new Partitions(db).cover(base + BATCHES * 4 * 2 * 100 * 60_000);
  let batch = 0;
  const entries = (): Entry[] => {
    const out: Entry[] = [];
    const b = batch++;
    for (let m = 0; m < 100; m++)
      for (const s of sensors)
        out.push({
          kind: 'sensor',
          id: s.id,
          ts: base + (b * 100 + m) * 60_000,
          values: [Math.round(((s.id % 97) * 10 + Math.sin(m / 60) * 50) * 100) / 100],
          index: out.length,
          site: s.site,
        });
    return out;
  };
  // Each way makes what it sends first (not timed), then sends it (timed): the database's part.
  const ways: [string, (e: Entry[]) => () => Promise<unknown>][] = [
    [
      'COPY of 1,000 rows (text)',
      (e) => {
        const text = e
          .map((x) => `${x.id}\t${new Date(x.ts).toISOString()}\t${x.values[0]}\n`)
          .join('');
        return () =>
          pipeline(
            Readable.from([text]),
            client.query(copyFrom('COPY sensor_logs (sensor_id, ts, value) FROM STDIN')),
          );
      },
    ],
    [
      'COPY of 1,000 rows (binary)',
      (e) => {
        const buf = Buffer.alloc(19 + e.length * (2 + 8 + 12 + 12) + 2);
        buf.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
        let o = 19;
        for (const x of e) {
          o = buf.writeInt16BE(3, o);
          o = buf.writeInt32BE(4, o);
          o = buf.writeInt32BE(x.id, o);
          o = buf.writeInt32BE(8, o);
          o = buf.writeBigInt64BE(BigInt(x.ts - 946_684_800_000) * 1000n, o);
          o = buf.writeInt32BE(8, o);
          o = buf.writeDoubleBE(x.values[0] as number, o);
        }
        buf.writeInt16BE(-1, o);
        return () =>
          pipeline(
            Readable.from([buf]),
            client.query(
              copyFrom('COPY sensor_logs (sensor_id, ts, value) FROM STDIN (FORMAT binary)'),
            ),
          );
      },
    ],
    [
      'plain INSERT … SELECT FROM unnest',
      (e) => {
        const query = {
          name: 'plain',
          text: `INSERT INTO sensor_logs (sensor_id, ts, value)
                   SELECT id, to_timestamp(t / 1000), v FROM unnest($1::int[], $2::float8[], $3::float8[]) AS u(id, t, v)`,
          values: [
            `{${e.map((x) => x.id).join(',')}}`,
            `{${e.map((x) => x.ts).join(',')}}`,
            `{${e.map((x) => x.values[0]).join(',')}}`,
          ],
        };
        return () => client.query(query);
      },
    ],
    [
      "the service's statement",
      (e) => {
        const st = buildStatement([makeJob('log', e, [e[0].site!])], [e[0].site!], 'insert', true);
        return () => client.query({ name: statementName(st.sql), text: st.sql, values: st.params });
      },
    ],
  ];
  if (other)
    ways.push([
      `the statement of ${other.commit}`,
      (e) => {
        const st = other.build([makeJob('log', e, [e[0].site!])], [e[0].site!], 'insert', true);
        return () =>
          client.query({ name: `o${statementName(st.sql)}`, text: st.sql, values: st.params });
      },
    ]);
  const times = new Map<string, number[]>();
  const cpu = new Map<string, number>();
  const timeOne = async (label: string, make: (e: Entry[]) => () => Promise<unknown>) => {
    const send = make(entries());
    const c0 = backendCpu();
    const t0 = performance.now();
    await send();
    const list = times.get(label) ?? [];
    list.push(performance.now() - t0);
    times.set(label, list);
    cpu.set(label, (cpu.get(label) ?? 0) + backendCpu() - c0);
  };
  for (const shared of [true, false]) {
    for (let i = 0; i < BATCHES; i++) {
      if (shared && i % 20 === 0) {
        if (i) await client.query('COMMIT');
        await client.query('BEGIN');
      }
      for (const [label, write] of ways)
        await timeOne(
          `${label}${shared ? ', 20 batches a transaction' : ', each committed'}`,
          write,
        );
    }
    if (shared) await client.query('COMMIT');
  }
  console.log(
    `${BATCHES} batches of 1,000 rows each way, in turns, one connection (ms a batch; rows/s from the mean; the backend's CPU ms a batch, from /proc in 10 ms ticks, summed over the batches):`,
  );
  console.log('| way | p50 ms | mean ms | rows/s | backend CPU ms |');
  console.log('|---|---|---|---|---|');
  for (const [label, list] of times) {
    const sorted = [...list].sort((a, b) => a - b);
    const mean = list.reduce((a, b) => a + b, 0) / list.length;
    const perBatch = cpu.get(label)! / list.length;
    console.log(
      `| ${label} | ${sorted[sorted.length >> 1].toFixed(2)} | ${mean.toFixed(2)} | ${Math.round(1_000_000 / mean).toLocaleString('en-US')} | ${Number.isNaN(perBatch) ? '–' : perBatch.toFixed(2)} |`,
    );
  }
} finally {
  await client.end().catch(() => {});
  await db.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
}
