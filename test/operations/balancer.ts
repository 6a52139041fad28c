import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ROOT, type Running } from './process.js';

// Helpers of test/operations/haproxy.test.ts: the built server and HAProxy as child processes,
// HAProxy's admin socket, an upload client that retries what got no answer, and a live-stream
// client that reconnects with Last-Event-ID wherever the balancer sends it.

/** The sample configuration of docs/deployment.md, run as it is (addresses from the environment). */
export const HAPROXY_CFG = join(ROOT, 'docs/haproxy.cfg');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  return run(process.execPath, [entry], { LOG_LEVEL: 'warn', ...env });
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

export interface Answer {
  status: number;
  body: any;
  servedBy: string | null;
  /** Requests made: 1 + retries. */
  attempts: number;
  /** What each retried attempt got: a status, or the network error. */
  failures: string[];
}

/** No answer to rely on: the connection failed, the balancer found no instance, or nothing was stored. */
const RETRIED = new Set([500, 502, 503, 504]);

/**
 * POSTs JSON until it gets an answer other than a failure: what an edge gateway does with an
 * upload (uploads are idempotent, so a replay of one that was stored is a duplicate).
 */
export async function postWithRetry(
  url: string,
  /** The bearer token ('' for none). */
  token: string,
  body: unknown,
  { deadlineMs = 20_000, pauseMs = 100 } = {},
): Promise<Answer> {
  const end = Date.now() + deadlineMs;
  const failures: string[] = [];
  for (;;) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (!RETRIED.has(res.status))
        return {
          status: res.status,
          body: text ? JSON.parse(text) : undefined,
          servedBy: res.headers.get('x-served-by'),
          attempts: failures.length + 1,
          failures,
        };
      failures.push(String(res.status));
    } catch (err) {
      failures.push((err as Error).cause ? String((err as Error).cause) : String(err));
    }
    if (Date.now() > end) throw new Error(`no answer from ${url} in ${deadlineMs} ms: ${failures}`);
    await sleep(pauseMs);
  }
}

export interface StreamEvent {
  type: string;
  id: string;
  data: any;
  /** Index of the connection it came on. */
  connection: number;
  at: number;
}

export interface StreamConnection {
  /** When the request was sent, and when its response ended (or failed). */
  at: number;
  ended?: number;
  /** The Last-Event-ID it carried. */
  lastEventId: string | null;
  status?: number;
  servedBy?: string | null;
  error?: string;
}

export interface FollowedStream {
  events: StreamEvent[];
  connections: StreamConnection[];
  /** The first event from index `from` on that matches, waiting up to ms for it. */
  next(
    match: (e: StreamEvent) => boolean,
    opts?: { from?: number; ms?: number },
  ): Promise<StreamEvent>;
  close(): void;
}

/**
 * A live-stream client on fetch (the token goes in the Authorization header), as a dashboard would
 * write one: it reads Server-Sent Events, and whenever its response ends, fails or is refused, it
 * waits the `retry` the server gave and asks again with the id of the last event it received.
 */
export function followStream(
  base: string,
  token: string,
  query: string,
  opts: { lastEventId?: string } = {},
): FollowedStream {
  const events: StreamEvent[] = [];
  const connections: StreamConnection[] = [];
  const abort = new AbortController();
  let lastId = opts.lastEventId;
  let retryMs = 1000;
  let wake: (() => void) | undefined;

  const read = async (body: ReadableStream<Uint8Array>, connection: number) => {
    const decoder = new TextDecoder();
    let buffer = '';
    let type = '';
    let data: string[] = [];
    let id: string | undefined;
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (id !== undefined) lastId = id;
          if (data.length)
            events.push({
              type: type || 'message',
              id: lastId ?? '',
              data: JSON.parse(data.join('\n')),
              connection,
              at: Date.now(),
            });
          type = '';
          data = [];
          id = undefined;
          wake?.();
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: the heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  };

  void (async () => {
    while (!abort.signal.aborted) {
      const connection: StreamConnection = { at: Date.now(), lastEventId: lastId ?? null };
      connections.push(connection);
      try {
        const res = await fetch(`${base}/v1/stream?${query}`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            ...(lastId ? { 'last-event-id': lastId } : {}),
          },
          signal: abort.signal,
        });
        connection.status = res.status;
        connection.servedBy = res.headers.get('x-served-by');
        if (res.status === 200 && res.body) await read(res.body, connections.length - 1);
        else await res.body?.cancel();
      } catch (err) {
        connection.error = String(err);
      }
      connection.ended = Date.now();
      wake?.();
      if (!abort.signal.aborted) await sleep(retryMs);
    }
  })();

  return {
    events,
    connections,
    async next(match, { from = 0, ms = 10_000 } = {}) {
      const end = Date.now() + ms;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (Date.now() > end)
          throw new Error(
            `no matching event in ${ms} ms; got ${events.map((e) => e.type).join(', ')}`,
          );
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => abort.abort(),
  };
}
