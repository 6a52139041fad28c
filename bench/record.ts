// Every benchmark run keeps its whole output: record() at the start of a bench script opens
// bench/results/<YYYY-MM-DD>-<name>[-<n>].txt (a new file, never an earlier run's), writes a header
// (when, the command and its settings, the machine, Node, the database and its settings), then copies
// there everything the script prints on stdout and stderr (its server children and worker threads
// included, as they print through this process), and at exit the wall time. bench/RESULTS.md quotes
// only figures that such a file holds.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { cpus, freemem, loadavg, release, totalmem, type } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from '../src/db/index.js';
import { openPostgres } from '../src/db/postgres.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The server settings that move benchmark figures, in the order the header lists them. */
export const SETTINGS = [
  'autovacuum',
  'shared_buffers',
  'work_mem',
  'max_connections',
  'synchronous_commit',
  'fsync',
  'wal_level',
];

/** Environment variables the header lists: every BENCH_* and SOAK_*, and these. */
const RELEVANT_ENV = [
  'NODE_OPTIONS',
  'UV_THREADPOOL_SIZE',
  'DATABASE_URL',
  'DATA_DIR',
  'GROUP_COMMIT',
  'PGHOST',
  'PGPORT',
  'PGDATABASE',
  'PGUSER',
];

/** `<date>-<name>.txt` for the first run of the day, then `-2`, `-3`… */
export function resultFileName(name: string, date: Date, n = 1): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`bench name: ${name}`);
  return `${date.toISOString().slice(0, 10)}-${name}${n > 1 ? `-${n}` : ''}.txt`;
}

/** Creates the first free result file of the day in dir (never an existing one); returns its path and descriptor. */
export function createResultFile(
  dir: string,
  name: string,
  date: Date,
): { path: string; fd: number } {
  mkdirSync(dir, { recursive: true });
  for (let n = 1; ; n++) {
    const path = join(dir, resultFileName(name, date, n));
    try {
      return { path, fd: openSync(path, 'wx') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** A connection string without its password (result files are committed). */
export function redact(value: string): string {
  return value.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/gi, '$1:***@');
}

/** The environment variables worth recording, sorted, passwords hidden. */
export function relevantEnv(env: NodeJS.ProcessEnv): [string, string][] {
  return Object.entries(env)
    .filter(
      ([k, v]) =>
        v !== undefined &&
        (k.startsWith('BENCH_') || k.startsWith('SOAK_') || RELEVANT_ENV.includes(k)),
    )
    .map(([k, v]) => [k, redact(v!)] as [string, string])
    .sort(([a], [b]) => a.localeCompare(b));
}

export function pgliteVersion(): string {
  try {
    const pkg = join(root, 'node_modules/@electric-sql/pglite/package.json');
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * One line on a database: its kind and version and the SETTINGS, queried through the connection
 * given (the bench's own). On PGlite, the package version and the PostgreSQL inside it.
 */
export async function describeDatabase(
  db: Queryable,
  kind: Database['kind'] = 'postgres',
): Promise<string> {
  const [{ v }] = await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
  const rows = await db.query<{ name: string; value: string }>(
    `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[])`,
    [SETTINGS],
  );
  const value = new Map(rows.map((r) => [r.name, r.value]));
  const settings = SETTINGS.map((s) => `${s}=${value.get(s) ?? '?'}`).join(', ');
  const what =
    kind === 'pglite' ? `PGlite ${pgliteVersion()} (PostgreSQL ${v})` : `PostgreSQL ${v}`;
  return `${what}; ${settings}`;
}

export interface HeaderInfo {
  name: string;
  started: Date;
  command: string;
  env: [string, string][];
  machine: { os: string; cpu: string; cores: number; memory: number; free: number; load: number[] };
  node: string;
  commit?: string;
  /** One line per database the bench uses (describeDatabase, or why it could not be read). */
  databases: string[];
  /** What the bench does to the database beyond the service's own work (VACUUM, ANALYZE…), if anything. */
  maintenance?: string;
}

export function formatHeader(h: HeaderInfo): string {
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const m = h.machine;
  return [
    `# bench/${h.name}: ${h.started.toISOString()}`,
    `command:  ${h.command}`,
    `env:      ${h.env.length ? h.env.map(([k, v]) => `${k}=${v}`).join(' ') : '(no BENCH_* or related settings)'}`,
    `code:     ${h.commit ?? 'unknown'}`,
    `machine:  ${m.cores} × ${m.cpu}, ${gib(m.memory)} memory (${gib(m.free)} free), ${m.os}`,
    `load:     ${m.load.map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min averages at start)`,
    `node:     ${h.node}`,
    ...h.databases.map((d) => `database: ${d}`),
    `manual VACUUM/ANALYZE: ${h.maintenance ?? 'none (the database as the service leaves it, autovacuum as configured)'}`,
    '',
    '',
  ].join('\n');
}

export function formatFooter(started: number, ended: number, code: number): string {
  const [l1] = loadavg();
  return `\n# wall time ${((ended - started) / 1000).toFixed(1)} s, exit code ${code}, load average at the end ${l1.toFixed(2)}\n`;
}

function commitOf(): string | undefined {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', root, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no')
      ? ' (uncommitted changes)'
      : '';
    return `${git('log', '-1', '--format=%h %s')}${dirty}`;
  } catch {
    return undefined;
  }
}

function commandLine(): string {
  const script = process.argv[1] ? relative(process.cwd(), process.argv[1]) : '';
  const runner = process.execArgv.some((a) => a.includes('tsx')) ? 'npx tsx' : 'node';
  return [runner, script, ...process.argv.slice(2)].filter(Boolean).join(' ');
}

export interface RecordOptions {
  /** The bench's PostgreSQL (its connection string or an open connection): its version and settings go into the header. */
  postgres?: string | Queryable;
  /** The bench also runs on PGlite: its version goes into the header (the settings are printed where one opens). */
  pglite?: boolean;
  /** Manual maintenance the bench does this run (an opt-in such as BENCH_ANALYZE=1), for the header. */
  maintenance?: string;
  /** Where the file goes (default bench/results, or BENCH_RESULTS_DIR). */
  dir?: string;
}

let current: { path: string; fd: number } | undefined;

/** Writes text to the result file only (not the console), e.g. whole query plans a report only counts. */
export function toRecord(text: string): void {
  if (current) writeSync(current.fd, text);
}

/** The path of this run's result file, relative to the checkout (undefined when not recording). */
export function recordPath(): string | undefined {
  return current && relative(root, current.path);
}

/**
 * Starts keeping this run's output: call once, first thing in a bench script. Returns the result
 * file's path; at exit the file ends with the wall time and the path is printed.
 */
export async function record(name: string, options: RecordOptions = {}): Promise<string> {
  if (current) throw new Error('record() called twice');
  const startedAt = Date.now();
  const started = new Date(startedAt);
  const databases: string[] = [];
  if (options.postgres !== undefined) {
    const url = typeof options.postgres === 'string' ? options.postgres : undefined;
    try {
      const conn = url ? await openPostgres(url, { max: 1 }) : undefined;
      try {
        databases.push(await describeDatabase(conn ?? (options.postgres as Queryable)));
      } finally {
        await conn?.close();
      }
    } catch (err) {
      databases.push(`PostgreSQL at ${redact(url ?? '?')}: not read (${(err as Error).message})`);
    }
  }
  if (options.pglite)
    databases.push(
      `PGlite ${pgliteVersion()} (embedded; where the bench opens one itself, a "database:" line below gives its PostgreSQL version and settings)`,
    );
  const header = formatHeader({
    name,
    started,
    command: commandLine(),
    env: relevantEnv(process.env),
    machine: {
      os: `${type()} ${release()}`,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      cores: cpus().length,
      memory: totalmem(),
      free: freemem(),
      load: loadavg(),
    },
    node: process.version,
    commit: commitOf(),
    databases,
    maintenance: options.maintenance,
  });
  const dir = options.dir ?? process.env.BENCH_RESULTS_DIR ?? join(root, 'bench/results');
  current = createResultFile(dir, name, started);
  const { fd, path } = current;
  writeSync(fd, header);

  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tee = (stream: NodeJS.WriteStream, original: typeof stream.write) => {
    stream.write = function (this: NodeJS.WriteStream, chunk: any, ...rest: any[]) {
      try {
        const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined;
        writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
      } catch {
        // the record is a copy; the console keeps the output either way
      }
      return (original as (...a: any[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
  };
  tee(process.stdout, originals.out);
  tee(process.stderr, originals.err);

  // Node prints an uncaught error itself, past process.stderr: the file gets it here.
  process.on('uncaughtExceptionMonitor', (err) =>
    toRecord(`\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
  );
  // Interrupted runs end their file too (process.exit runs the exit handlers; a signal alone would not).
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  process.once('exit', (code) => {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
    try {
      writeSync(fd, formatFooter(startedAt, Date.now(), code));
      closeSync(fd);
    } catch {
      // nothing more to keep
    }
    current = undefined;
    process.stdout.write(`result file: ${relative(process.cwd(), path)}\n`);
  });
  return path;
}
