import { connect as connectSocket } from 'node:net';
import type { Database } from './types.js';

// What "the database is unavailable" means to the rest of the service: a call that passed its
// deadline, or an error that says the server could not be reached, went away, or gave up waiting.
// Requests answer these 503 (uploads 500); anything else is a bug or bad data.

/** A database call did not finish within its deadline; it was cancelled and its connection dropped. */
export class DatabaseTimeout extends Error {
  readonly code = 'DB_DEADLINE';
  /**
   * @param running whether the database was working on the call when its time ran out (a statement
   * ran too long, or the request had used its time up) rather than not reached at all (no connection)
   */
  constructor(
    readonly ms: number,
    readonly running = false,
  ) {
    super(`the database did not answer within ${ms} ms`);
  }
}

/**
 * Whether an error is a call that ran out of its time while the database was working on it: a
 * statement past our deadline or the server's statement_timeout (57014). Such a read is answered 503
 * saying so (a shorter range may do), not "the database is unavailable".
 */
export const isOutOfTime = (err: unknown): boolean =>
  (err instanceof DatabaseTimeout && err.running) || errorCode(err) === '57014';

// 08: connection exception; 57P01-03: shutdown, cannot connect now; 57014: statement cancelled
// (server-side statement_timeout); 55P03: lock not available (lock_timeout); 53300: too many connections;
// 25006: a write sent to a server that is (now) a standby.
const SERVER_CODES = /^(08|57P0[123]$|57014$|55P03$|53300$|25006$)/;
/**
 * Server codes that say the connection itself is done for: its server went away or is shutting down
 * (08, 57P01-03), or is no longer the primary (25006 read_only_sql_transaction: a connection that
 * landed on a standby, or a primary demoted under it). Such a connection is dropped, never handed to
 * another call (see dropsConnection).
 */
const CONNECTION_CODES = /^(08|57P0[123]$|25006$)/;
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** pg's words for a connection that broke or could not be made in time. */
const LOST_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/;
const DRIVER_MESSAGES = new RegExp(
  `${LOST_MESSAGES.source}|Client was closed|Cannot use a pool after calling end|PGlite is closed`,
);

/** A text property of an error (code, message), '' when it has none. */
const textOf = (err: unknown, key: 'code' | 'message'): string => {
  const v =
    typeof err === 'object' && err !== null && key in err
      ? (err as Record<typeof key, unknown>)[key]
      : undefined;
  return typeof v === 'string' ? v : '';
};

/** An error's code: the SQLSTATE of a server error, a Node code (ECONNRESET…) or ''. */
export const errorCode = (err: unknown): string => textOf(err, 'code');

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseTimeout) return true;
  const code = errorCode(err);
  return (
    SERVER_CODES.test(code) ||
    NETWORK_CODES.has(code) ||
    DRIVER_MESSAGES.test(textOf(err, 'message'))
  );
}

/**
 * Whether an error means its connection must be dropped and a new one made (a failover, a restart):
 * the connection broke, its server is shutting down, or it is no longer the primary. Never an answer
 * for the client by itself: the pool reconnects and, where that is safe, tries again.
 */
export function dropsConnection(err: unknown): boolean {
  const code = errorCode(err);
  return (
    CONNECTION_CODES.test(code) ||
    NETWORK_CODES.has(code) ||
    LOST_MESSAGES.test(textOf(err, 'message'))
  );
}

/**
 * Whether a statement that failed so certainly wrote nothing: the server refused a write as a standby
 * (25006), or no connection was had at all. Otherwise a broken connection leaves the outcome of what
 * it was running unknown (see src/db/outcome.ts).
 */
export const wroteNothing = (err: unknown): boolean => errorCode(err) === '25006';

/**
 * Asks the server to cancel what a backend is running (the protocol's CancelRequest, on a connection
 * of its own; no answer is sent). Best effort: a server that does not answer is given up after 2 s.
 */
export function cancelBackend(
  host: string,
  port: number,
  processId: number,
  secretKey: number,
): void {
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4);
  message.writeInt32BE(processId, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = host.startsWith('/')
    ? connectSocket({ path: `${host}/.s.PGSQL.${port}` })
    : connectSocket({ host, port });
  socket.setTimeout(2000, () => socket.destroy());
  socket.on('error', () => {});
  socket.on('connect', () => socket.end(message));
}

/**
 * Runs work, rejecting with DatabaseTimeout once ms have passed (Infinity: never). onExpire runs at
 * that moment (it cancels and drops the connection); the work's own late outcome is ignored.
 */
export async function withinDeadline<T>(
  ms: number,
  work: (expired: () => boolean) => Promise<T>,
  /**
   * Runs at expiry; true when the database was working on the call then (see DatabaseTimeout). By
   * default false: unless the caller knows, a call out of time counts as a database out of reach.
   */
  onExpire: () => boolean = () => false,
): Promise<T> {
  if (!Number.isFinite(ms)) return work(() => false);
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(new DatabaseTimeout(ms, onExpire()));
    }, ms);
  });
  const running = work(() => expired);
  running.catch(() => {}); // lost the race: its error is no longer anyone's
  try {
    return await Promise.race([running, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The database as one request uses it: every call ends within `ms` of its start and, until the
 * answer has begun (`answering()` true), also by `deadline` (epoch ms). So whatever a request does
 * before it answers, however many calls one after another, ends by its deadline; a call that would
 * start past it fails at once, without touching the database. Calls made once the answer has begun
 * (the later pages of a streamed body) have `ms` each.
 */
export function untilDeadline(
  db: Database,
  ms: number,
  deadline: number,
  answering: () => boolean,
): Database {
  const call = <T>(run: (view: Database) => Promise<T>): Promise<T> => {
    if (answering()) return run(db.bounded(ms));
    const left = deadline - Date.now();
    if (left <= 0) return Promise.reject(new DatabaseTimeout(ms, true));
    return run(db.bounded(Math.min(ms, left)));
  };
  return {
    kind: db.kind,
    query: (sql, params, options) => call((v) => v.query(sql, params, options)),
    transaction: (fn) => call((v) => v.transaction(fn)),
    snapshot: (fn) => call((v) => v.snapshot(fn)),
    exec: (sql) => call((v) => v.exec(sql)),
    bounded: (next) => untilDeadline(db, next, deadline, answering),
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    close: () => db.close(),
  };
}
