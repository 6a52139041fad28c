import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../../src/db/index.js';
import { freePort, ROOT, waitFor, type Running } from './process.js';

// Helpers of test/operations/haproxy.test.ts: the built server and HAProxy as child processes,
// HAProxy's admin socket, and two instances behind HAProxy on docs/haproxy.cfg.

/** The sample configuration of docs/deployment.md, run as it is (addresses from the environment). */
export const HAPROXY_CFG = join(ROOT, 'docs/haproxy.cfg');

/** Whether a command answers `<command> -v` (is on PATH and runs). */
export const onPath = (command: string) => spawnSync(command, ['-v']).status === 0;

function run(command: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** The built server (dist/server.js, as `npm start` runs it; CI builds before it tests). */
export function startServer(env: Record<string, string>): Running {
  const entry = join(ROOT, 'dist/server.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  return run(process.execPath, [entry], { LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env });
}

/** HAProxy in the foreground (-db) on docs/haproxy.cfg; its log lines go to its stdout. */
export function startHaproxy(env: Record<string, string>): Running {
  return run('haproxy', ['-db', '-f', HAPROXY_CFG], env);
}

/** Kills a child with SIGKILL (if it still runs) and waits for its end. */
export async function kill(p: Running | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGKILL');
  await p.exited;
}

/** One command on HAProxy's admin socket (`show stat`, …); its whole answer. */
export function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let out = '';
    s.setTimeout(2000, () => s.destroy(new Error(`no answer to ${command}`)));
    s.on('connect', () => s.write(`${command}\n`));
    s.on('data', (d) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

/** `show stat`: one record per proxy and server, keyed by the CSV header's names. */
export async function showStat(socket: string): Promise<Record<string, string>[]> {
  const [header, ...lines] = (await adminCommand(socket, 'show stat')).trim().split('\n');
  const names = header.replace(/^# /, '').split(',');
  return lines.map((line) => {
    const values = line.split(',');
    return Object.fromEntries(names.map((n, i) => [n, values[i] ?? '']));
  });
}

/** The servers of a backend and their state (`UP`, `DOWN`, `UP 1/2` while going down, …). */
export async function serverStates(socket: string, backend: string) {
  const rows = await showStat(socket);
  return Object.fromEntries(
    rows
      .filter((r) => r.pxname === backend && r.svname !== 'BACKEND' && r.svname !== 'FRONTEND')
      .map((r) => [r.svname, r.status]),
  );
}

/** Two instances of the built server behind HAProxy, on loopback (docs/haproxy.cfg's names). */
export interface Pair {
  /** The balancer's address. */
  lb: string;
  /** HAProxy's name of instance i (`instance1`, `instance2`). */
  name(i: number): string;
  /** The application_name of instance i's database connections. */
  appName(i: number): string;
  /** Each instance's state in HAProxy (`show stat` on the admin socket). */
  states(): Promise<Record<string, string>>;
  /** (Re)starts instance i on its port; resolves once its /health answers 200. */
  start(i: number): Promise<void>;
  kill(i: number): Promise<void>;
  close(): Promise<void>;
}

/** `env` is every instance's; `tag` names their database connections (`<tag>-1`, `<tag>-2`). */
export async function startPair(env: Record<string, string>, tag: string): Promise<Pair> {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const ports = [await freePort(), await freePort()];
  const instances: (Running | undefined)[] = [];
  let haproxy: Running | undefined;
  const name = (i: number) => `instance${i + 1}`;
  const appName = (i: number) => `${tag}-${i + 1}`;
  const states = () => serverStates(socket, 'instances');
  const start = async (i: number) => {
    const url = new URL(env.DATABASE_URL);
    url.searchParams.set('application_name', appName(i));
    const p = startServer({ ...env, DATABASE_URL: url.toString(), PORT: String(ports[i]) });
    instances[i] = p;
    await waitFor(async () => {
      if (p.child.exitCode !== null) throw new Error(`${name(i)} exited: ${p.stderr()}`);
      return (await fetch(`http://127.0.0.1:${ports[i]}/health`)).ok ? true : undefined;
    }, 60_000).catch((err) => {
      throw new Error(`${name(i)} did not start: ${err}\n${p.stderr().slice(-2000)}`);
    });
  };
  const pair: Pair = {
    lb: '',
    name,
    appName,
    states,
    start,
    kill: (i) => kill(instances[i]),
    async close() {
      await Promise.all([...instances, haproxy].map(kill));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all([start(0), start(1)]);
    const lbPort = await freePort();
    const h = startHaproxy({
      BALANCER_BIND: `127.0.0.1:${lbPort}`,
      BALANCER_SOCKET: socket,
      INSTANCE_1: `127.0.0.1:${ports[0]}`,
      INSTANCE_2: `127.0.0.1:${ports[1]}`,
    });
    haproxy = h;
    await waitFor(async () => {
      const s = await states();
      return s[name(0)] === 'UP' && s[name(1)] === 'UP' ? true : undefined;
    }, 20_000).catch((err) => {
      throw new Error(`haproxy not ready: ${err}\n${h.stderr()}${h.stdout()}`);
    });
    pair.lb = `http://127.0.0.1:${lbPort}`;
    return pair;
  } catch (err) {
    await pair.close();
    throw err;
  }
}

/** The most connections each named application held on PostgreSQL while sampled (every 100 ms). */
export function sampleConnections(db: Database, apps: string[]) {
  const peak = apps.map(() => 0);
  const timer = setInterval(() => {
    db.query<{ app: string; n: number }>(
      `SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = ANY($1) GROUP BY 1`,
      [apps],
    )
      .then((rows) => {
        for (const r of rows) {
          const i = apps.indexOf(r.app);
          peak[i] = Math.max(peak[i], r.n);
        }
      })
      .catch(() => {});
  }, 100);
  return {
    peak,
    stop: () => clearInterval(timer),
  };
}
