// Helpers for the benchmark scripts: a free loopback port, a fresh database of each kind, the real
// server in a child process, and printing a run's report with the result file (bench/record.ts) that
// bench/RESULTS.md cites for it.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Database } from '../src/db/index.js';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';
import { describeDatabase, recordPath } from './record.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A stop function that also tells the server's process id (to read its memory from outside). */
export type Stop = (() => Promise<void>) & { pid: number };

/**
 * Starts the server as `npm start` runs it, `dist/server.js` (built first where it is older than its
 * sources), on 127.0.0.1:port; resolves once /health answers. Returns a stop function.
 * BENCH_SERVER=source runs src/server.ts through tsx instead (the benches did until 2026-11-26: tsx
 * names every function the code makes, at each making: 1.6 % of the server's time under single
 * readings).
 * `serverRoot`: another checkout of the service to run instead of this one (to compare).
 */
export async function startServer(
  port: number,
  env: Record<string, string>,
  serverRoot = root,
): Promise<Stop> {
  // BENCH_SERVER_NODE_ARGS: Node options for the server, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // (a profile of the server under the bench's load; Node refuses --cpu-prof in NODE_OPTIONS).
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const source = process.env.BENCH_SERVER === 'source';
  if (!source) {
    const built = execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], {
      cwd: serverRoot,
      encoding: 'utf8',
    });
    if (built.trim()) console.log(built.trim());
  }
  const entry = source ? ['--import', 'tsx', 'src/server.ts'] : ['dist/server.js'];
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: serverRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEMO: '0',
      LOG_LEVEL: 'warn',
      // Metrics on, as deployed, each server on a port of its own (several run side by side to compare).
      METRICS_PORT: String(await freePort()),
      JWT_SECRET: 'bench-jwt-secret-of-at-least-32-characters',
      ...env,
    },
    // Piped through this process, so that the run's result file (bench/record.ts) keeps them too.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = Object.assign(
    async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    { pid: child.pid! },
  );
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok)
        return Object.assign(stop, { pid: child.pid! });
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error('server did not start in 30 s');
}

/** Resident memory of a process in bytes, read from /proc (Linux). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** CPU seconds a process has used (user + system), read from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  return statCpu(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** User and system CPU seconds in a /proc/<pid>/stat line (after the command, which may hold ") "). */
const statCpu = (stat: string): number => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/**
 * CPU seconds of each process of that name now running (PostgreSQL's backends: `postgres`), by pid,
 * from /proc; empty where /proc cannot be read. See cpuSecondsSince.
 */
export function cpuSecondsOf(name: string): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) continue;
    out.set(Number(pid), statCpu(stat));
  }
  return out;
}

/**
 * CPU seconds the processes of that name spent since `before` (cpuSecondsOf): those still running,
 * from where they were (new ones from their start). A process that ended meanwhile is left out, so
 * this is at least what they spent; NaN where /proc cannot be read.
 */
export function cpuSecondsSince(name: string, before: Map<number, number>): number {
  const now = cpuSecondsOf(name);
  if (!now.size && !before.size) return NaN;
  let total = 0;
  for (const [pid, t] of now) total += t - (before.get(pid) ?? 0);
  return total;
}

/** Latency histogram in 0.1 ms steps up to 60 s. */
export class Histogram {
  private counts = new Uint32Array(600_000);
  n = 0;
  max = 0;
  add(ms: number) {
    this.counts[Math.min(this.counts.length - 1, Math.max(0, Math.round(ms * 10)))]++;
    this.n++;
    this.max = Math.max(this.max, ms);
  }
  pct(p: number) {
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++)
      if ((seen += this.counts[i]) >= p * this.n) return i / 10;
    return this.max;
  }
}

/**
 * Prints a run's report under `## <heading>` (the console and the result file get it), ending with
 * the result file to cite. bench/RESULTS.md is a table per area, kept by hand: a bench never writes
 * it, so a trial cannot overwrite a kept figure. The last line says which area's rows the run can
 * update, or, with BENCH_WRITE=0, that the run is a trial not to be cited.
 */
export function reportSection(area: string, body: string, heading = area): void {
  const cited = recordPath();
  console.log(
    [
      '',
      `## ${heading}`,
      '',
      body.trimEnd(),
      ...(cited ? ['', `Result file: \`${cited}\`.`] : []),
      '',
    ].join('\n'),
  );
  if (process.env.BENCH_WRITE === '0')
    console.log('BENCH_WRITE=0: a trial, not to be cited in bench/RESULTS.md');
  else if (cited)
    console.log(
      `bench/RESULTS.md, "${area}": update the rows of the targets this run measured from the report above, citing [${basename(cited)}](results/${basename(cited)}), and commit that file`,
    );
  else
    console.log(`bench/RESULTS.md, "${area}": this run kept no result file, so it cannot be cited`);
}

/** Runs fn on a schema of its own on the PostgreSQL at dbUrl (dropped after), with the server environment that selects it. */
export async function onPostgres(
  dbUrl: string,
  name: string,
  fn: (db: Database, env: { DATABASE_URL: string }) => Promise<void>,
): Promise<void> {
  const schema = `bench_${name}_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(dbUrl, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(dbUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  try {
    await fn(await openPostgres(dbUrl, { schema }), { DATABASE_URL: url.toString() });
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
}

/**
 * Runs fn on a fresh database of each kind in turn: a schema of its own on the PostgreSQL at dbUrl
 * (dropped after), then, unless BENCH_SKIP_PGLITE=1, an embedded one in a temporary DATA_DIR (removed
 * after). fn gets the database open (to provision it; it closes it before a server opens the
 * embedded one) and the server environment that selects it.
 */
export async function onEachDatabase(
  dbUrl: string,
  name: string,
  fn: (
    backend: 'postgres' | 'pglite',
    db: Database,
    env: { DATABASE_URL?: string; DATA_DIR?: string },
  ) => Promise<void>,
): Promise<void> {
  await onPostgres(dbUrl, name, (db, env) => fn('postgres', db, env));
  if (process.env.BENCH_SKIP_PGLITE === '1') return;
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  try {
    const db = await openPglite(dir);
    console.log(`database: ${await describeDatabase(db, 'pglite')}`);
    await fn('pglite', db, { DATA_DIR: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The refresher's backlog right after a bulk run (stale quarters the run left, rolled up while
 * uploads waited at most BUSY_SHARE of the time), and how long the running server then takes to roll
 * them all up: what the run's figure did not pay for yet. Waits for them (5 minutes at most) and
 * says so in a line, also printed. Quarters of the last 15 minutes (live data) are not waited for.
 */
export async function rollupCatchUp(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const pending = async () =>
    Number(
      (
        await client.query(
          `SELECT count(*)::int AS n FROM rollup_dirty WHERE bucket <= now() - interval '15 minutes'`,
        )
      ).rows[0].n,
    );
  try {
    const left = await pending();
    const t0 = performance.now();
    let n = left;
    while (n > 0 && performance.now() - t0 < 300_000) {
      await new Promise((r) => setTimeout(r, 200));
      n = await pending();
    }
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    const line = `${left.toLocaleString('en-US')} stale quarters left at the end of the run, ${n ? `${n} still stale after ${s} s` : `all rolled up ${s} s later`}`;
    console.log(line);
    return line;
  } finally {
    await client.end();
  }
}
