// Helpers for the benchmark scripts: a free loopback port, a fresh database of each kind (and the
// demo site with its sensors and the bench's client), the real server in a child process with a
// client of its HTTP API, timing in turns, the archive pass (run here, watched in the server, or held
// off), and printing a run's report with the result file (bench/record.ts) that bench/RESULTS.md
// cites for it.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { upsertClient } from '../src/auth/clients.js';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres, type PostgresOptions } from '../src/db/postgres.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { ARCHIVE_LOCK_KEY, runArchive, type ArchiveReport } from '../src/telemetry/archive/pass.js';
import { describeArchive } from '../src/telemetry/archive/report.js';
import { Partitions } from '../src/telemetry/partitions.js';
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

/**
 * A stop function that also tells the server's process id (to read its memory from outside) and the
 * port of its metrics (METRICS_PORT).
 */
export type Stop = (() => Promise<void>) & { pid: number; metricsPort: number };

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
  const metricsPort = Number(env.METRICS_PORT ?? (await freePort()));
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: serverRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEMO: '0',
      LOG_LEVEL: 'warn',
      // Metrics on, as deployed, each server on a port of its own (several run side by side to compare).
      METRICS_PORT: String(metricsPort),
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
    { pid: child.pid!, metricsPort },
  );
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return stop;
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

export interface SchemaOptions {
  /**
   * A schema to keep (not dropped after; e.g. BENCH_SCHEMA): created if missing, else reused with
   * what an earlier run left in it (`reused` tells fn).
   */
  keep?: string;
  /** Options of the bench's own pool (max, statementTimeoutMs). */
  open?: Omit<PostgresOptions, 'schema'>;
}

/**
 * Runs fn on a schema of its own on the PostgreSQL at dbUrl (dropped after, unless opts.keep), with
 * the server environment that selects it (DATABASE_URL with `-c jit=off -c search_path=…`: options in
 * the URL replace those the service sets, so jit=off is repeated). The bench's pool is closed after.
 */
export async function onPostgres(
  dbUrl: string,
  name: string,
  fn: (
    db: Database,
    env: { DATABASE_URL: string },
    info: { schema: string; reused: boolean },
  ) => Promise<void>,
  opts: SchemaOptions = {},
): Promise<void> {
  if (opts.keep !== undefined && !/^[a-z_][a-z0-9_]*$/.test(opts.keep))
    throw new Error(`schema to keep: a lower-case SQL identifier, not ${opts.keep}`);
  const schema = opts.keep ?? `bench_${name}_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(dbUrl, { max: 1 });
  const reused =
    opts.keep !== undefined &&
    (await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).length > 0;
  if (!reused) await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(dbUrl);
  url.searchParams.set('options', `-c jit=off -c search_path=${schema}`);
  let db: Database | undefined;
  try {
    db = await openPostgres(dbUrl, { ...opts.open, schema });
    await fn(db, { DATABASE_URL: url.toString() }, { schema, reused });
  } finally {
    await db?.close().catch(() => {}); // fn may have closed it
    if (opts.keep === undefined) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
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

// ---- reports and timing ----

/** A report's lines: say() prints a line and keeps it for reportSection(area, lines.join('\n')). */
export function reportLines(): { lines: string[]; say: (line: string) => void } {
  const lines: string[] = [];
  return {
    lines,
    say: (line) => {
      console.log(line);
      lines.push(line);
    },
  };
}

const loads = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** A report's first line: the date, the machine, Node, and the load average before the run. */
export function machineLine(): string {
  return `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}; load average before the run ${loads()} (the machine is shared).`;
}

/** A report's last line: the load average after the run. */
export const loadAfterLine = (): string => `Load average after the run: ${loads()}.`;

/** The p-th percentile (0 to 100) of xs, the nearest rank; NaN when xs is empty. */
export const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

/** Milliseconds since t0 (process.hrtime.bigint()). */
export const msSince = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * Two calls compared, in turns (a b, then b a, and so on) after a warm-up of each: a machine that
 * slows down or speeds up during the run then weighs on both alike, where timing all of one and then
 * all of the other put the drift into their ratio (0.90 to 1.59 × for the same code in three runs of
 * bench/historian on 2026-11-26). Each call returns the milliseconds it measured (its request alone,
 * say: what it does before and after is not timed). Stops early, after at least one of each, once
 * budgetMs have passed since the start (warm-ups included): `n` then says how many were timed.
 */
export async function inTurns(
  a: () => Promise<number>,
  b: () => Promise<number>,
  n: number,
  budgetMs = Infinity,
): Promise<{ a: number[]; b: number[] }> {
  const t0 = performance.now();
  await a();
  await b();
  const out = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < n && (i === 0 || performance.now() - t0 < budgetMs); i++) {
    if (i % 2 === 0) {
      out.a.push(await a());
      out.b.push(await b());
    } else {
      out.b.push(await b());
      out.a.push(await a());
    }
  }
  return out;
}

/** One call timed n times after a warm-up (each returns its milliseconds); the budget as in inTurns. */
export async function timedRuns(
  fn: () => Promise<number>,
  n: number,
  budgetMs = Infinity,
): Promise<number[]> {
  const t0 = performance.now();
  await fn();
  const out: number[] = [];
  for (let i = 0; i < n && (i === 0 || performance.now() - t0 < budgetMs); i++)
    out.push(await fn());
  return out;
}

// ---- the demo site and the server's API ----

/** The bench's API client (every site), which provisionSensors creates. */
export const BENCH_CLIENT = { clientId: 'bench', clientSecret: 'bench-secret-123456' };

/** Ten sensors of the demo site provisionSensors imports (it has 12). */
export const DEMO_SENSORS = Array.from({ length: 10 }, (_, i) => 10100 + i);

/**
 * A fresh database made ready for the sensor benches: migrations, one demo site of 12 sensors (no
 * transactions, no images; DEMO_SENSORS among them), the client BENCH_CLIENT with every site, and
 * the log partitions of the months around now.
 */
export async function provisionSensors(db: Database): Promise<void> {
  await migrate(db);
  await importDocument(
    db,
    generateDemo({ sites: 1, sensorsPerSite: 12, transactionsPerSite: 0, imagesPerSite: 0 }),
  );
  await upsertClient(db, { ...BENCH_CLIENT, siteIds: '*' });
  await new Partitions(db).cover(Date.now());
}

/** An HTTP answer, timed from the request's start to its last byte. */
export interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** The server in a child process (startServer) and a client of its API, signed in as BENCH_CLIENT. */
export interface Api {
  base: string;
  stop: Stop;
  /** A POST with the bench's token; a body that is not a string is sent as JSON (made before the clock starts). */
  post(path: string, body: unknown, accept?: string): Promise<Answer>;
  /** The sum of a metric's samples whose labels include `labels` (the server's /metrics). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/**
 * Starts the server (startServer on a free port, RATE_LIMIT_MAX out of the way; `env` after) and
 * takes a token for BENCH_CLIENT.
 */
export async function startApi(env: Record<string, string>, serverRoot?: string): Promise<Api> {
  const port = await freePort();
  const stop = await startServer(port, { RATE_LIMIT_MAX: '100000000', ...env }, serverRoot);
  const base = `http://127.0.0.1:${port}`;
  try {
    const res = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(BENCH_CLIENT),
    });
    if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
    const { accessToken } = (await res.json()) as { accessToken: string };
    return {
      base,
      stop,
      post: async (path, body, accept = 'application/json') => {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        const t = process.hrtime.bigint();
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${accessToken}`,
            'content-type': 'application/json',
            accept,
          },
          body: text,
        });
        const answer = await res.text();
        return { status: res.status, text: answer, ms: msSince(t) };
      },
      metric: async (name, labels = {}) => {
        const text = await (await fetch(`http://127.0.0.1:${stop.metricsPort}/metrics`)).text();
        let sum = 0;
        for (const m of text.matchAll(/^([a-z_:][a-z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/gim)) {
          if (m[1] !== name) continue;
          const has = new Map(
            [...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]] as const),
          );
          if (Object.entries(labels).every(([k, v]) => has.get(k) === v)) sum += Number(m[3]);
        }
        return sum;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---- the archive ----

/** One archive pass of the service (runArchive) in this process, timed, with its report's lines. */
export interface PassRun {
  report: ArchiveReport;
  ms: number;
  /** Sensor-days it archived. */
  sensorDays: number;
  lines: string[];
}

/**
 * Runs the service's archive pass (src/telemetry/archive/pass.ts, what `npm run site-monitor --
 * archive` runs) now, in this process, on db with ARCHIVE_AFTER_DAYS=days. Throws when another pass
 * held the lock (nothing was done).
 */
export async function archivePass(db: Database, days: number): Promise<PassRun> {
  const t0 = process.hrtime.bigint();
  const report = await runArchive(db, { days });
  const ms = msSince(t0);
  const lines = describeArchive(report);
  if (!report.ran) throw new Error(`the archive pass did not run: ${lines.join('; ')}`);
  const sensorDays = report.kinds.find((k) => k.kind === 'sensor')?.days ?? 0;
  return { report, ms, sensorDays, lines };
}

/**
 * Holds the archive pass's lock of `schema` on a connection of its own until release(): the server's
 * own pass (ARCHIVE_AFTER_DAYS > 0, a minute after its start whatever ARCHIVE_INTERVAL_MS) then finds
 * another under way and does nothing. Checked through db (a connection of that schema).
 */
export async function holdArchiveLock(
  dbUrl: string,
  db: Database,
  schema: string,
): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: dbUrl });
  await holder.connect();
  try {
    await holder.query(`SELECT pg_advisory_lock($1, hashtext($2))`, [ARCHIVE_LOCK_KEY, schema]);
    const free = await db.transaction(async (tx) => {
      const [r] = await tx.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_xact_lock(${ARCHIVE_LOCK_KEY}, hashtext(current_schema())) AS locked`,
      );
      return r.locked;
    });
    if (free) throw new Error("the archive pass's lock is not the one held");
  } catch (err) {
    await holder.end();
    throw err;
  }
  return () => holder.end();
}

/** A pass of the server's that archived days, seen in its metrics: when (ms after `since`) and how many. */
export interface PassSeen {
  at: number;
  days: number;
}

/**
 * Watches the server's archive passes through its metric site_monitor_archive_days_total
 * {result="archived"} (every kind), read every `everyMs` (a second: the server makes the text each
 * time): each rise is a pass that ended having archived that many equipment-days (two passes ending
 * between two reads count as one).
 */
export function watchArchive(
  api: Api,
  since: number,
  everyMs = 1000,
): { passes: PassSeen[]; stop: () => Promise<PassSeen[]> } {
  const passes: PassSeen[] = [];
  let last = 0;
  let stopping = false;
  const read = () => api.metric('site_monitor_archive_days_total', { result: 'archived' });
  const loop = (async () => {
    last = await read().catch(() => 0);
    while (!stopping) {
      await new Promise((r) => setTimeout(r, everyMs));
      let now: number;
      try {
        now = await read();
      } catch {
        continue; // the server is stopping
      }
      if (now > last) passes.push({ at: performance.now() - since, days: now - last });
      last = now;
    }
  })();
  return {
    passes,
    stop: async () => {
      stopping = true;
      await loop;
      return passes;
    },
  };
}
