import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { isFresh } from '../../scripts/fresh.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

let built: boolean | undefined;
/**
 * Whether dist/ was built from src/ as it is (`npm run build`; CI builds before it tests, and
 * `npm ci` builds on install): newer than every file of src/ and package.json, the rule of
 * `npm run build`'s --if-needed (scripts/fresh.mjs). Decided once per test process.
 */
function distIsFresh(): boolean {
  if (built === undefined) built = isFresh(ROOT, join(ROOT, 'dist/server.js'), [join(ROOT, 'src')]);
  return built;
}

/**
 * Runs an entry point of src/ (`cli.ts`, `server.ts`) as its own process, with the given
 * environment: its build in dist/ when that is up to date (as `npm start` runs it; it starts in about
 * a third of the time), else the source through tsx.
 */
export function runTs(entry: string, args: string[], env: Record<string, string>): Running {
  const script = distIsFresh()
    ? [join('dist', entry.replace(/\.ts$/, '.js'))]
    : ['--import', 'tsx', `src/${entry}`];
  const child = spawn(process.execPath, [...script, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'warn',
      // Servers started side by side must not all take the default metrics port (tests that want it set one).
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs a command to its end; returns its exit code and output. */
export async function runToEnd(entry: string, args: string[], env: Record<string, string>) {
  const r = runTs(entry, args, env);
  const code = await r.exited;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Where a suite's server process keeps its data: a fresh DATA_DIR (embedded database) or a schema
 * of its own on the test PostgreSQL (created by `prepare`). `env` points the process at it; `admin`
 * runs SQL on the test PostgreSQL; `dispose` removes it all.
 */
export function serverStore(backend: 'pglite' | 'postgres', prefix: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `site-monitor-${prefix}-`));
  const schema = `${prefix}_${Date.now()}`;
  const url = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://unused');
  url.searchParams.set('options', `-c search_path=${schema}`);
  const env: Record<string, string> =
    backend === 'pglite' ? { DATA_DIR: dataDir } : { DATABASE_URL: url.toString(), DEMO: '1' };
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    dataDir,
    schema,
    env,
    admin,
    async prepare() {
      if (backend === 'postgres') await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
    },
    async dispose() {
      rmSync(dataDir, { recursive: true, force: true });
      if (backend === 'postgres')
        await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

/**
 * The server (src/server.ts) on a free loopback port with `env`, once /health answers; fails with
 * its stderr when it exits or does not start within `ms`.
 */
export async function startServerProcess(
  env: Record<string, string>,
  ms = 150_000,
): Promise<{ server: Running; base: string }> {
  const port = await freePort();
  const server = runTs('server.ts', [], { ...env, PORT: String(port), HOST: '127.0.0.1' });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (server.child.exitCode !== null) throw new Error(`server exited: ${server.stderr()}`);
    return (await fetch(`${base}/health`)).ok ? true : undefined;
  }, ms).catch((err: Error) => {
    server.child.kill('SIGKILL');
    throw new Error(`server did not start: ${err.message}\n${server.stderr().slice(-2000)}`);
  });
  return { server, base };
}
