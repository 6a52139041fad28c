import type pg from 'pg';
import {
  cancelBackend,
  DatabaseTimeout,
  dropsConnection,
  withinDeadline,
  wroteNothing,
} from './deadline.js';

// Through a failover (docs/deployment.md#database-failover) the pool's connections to the old
// primary break, and for a second or two new ones are refused, cut at once, or land on a server that
// is now a standby. None of that is an answer for a client: a connection that failed so is dropped,
// never handed to another call, and the call takes a new one, after a short pause, while its time lasts.

/** Pauses between attempts: short at first (a switchover is over in about a second), then every 0.5 s. */
const pause = (n: number) => Math.min(500, 50 * 2 ** n);
/** How long an unbounded call (migrations, the CLI) keeps trying to get a connection. */
const UNBOUNDED_RETRY_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What onConnection tells about the connections it uses (src/db/primary.ts keeps the figures). */
export interface ConnectionEvents {
  /** A connection could not be made (no client) or the client's broke (dropsConnection). */
  lost(client?: pg.PoolClient): void;
  /** Work succeeded on the client. */
  succeeded(client: pg.PoolClient): void;
}

/**
 * Takes a connection of the pool and runs work on it, all within ms. Past the deadline the backend is
 * asked to cancel its statement and the connection is destroyed (the pool opens a new one when
 * needed): a server that stopped answering or a statement waiting on a lock never keeps a pool slot.
 * A connection that cannot be had (refused, cut) is asked for again until the deadline; work that
 * failed because its connection is done for (dropsConnection) drops that connection and, when `again`
 * says running it once more is safe (by default: only when it certainly wrote nothing), runs again
 * on a new one.
 */
export function onConnection<T>(
  pool: pg.Pool,
  ms: number,
  work: (c: pg.PoolClient) => Promise<T>,
  again: (err: unknown) => boolean = wroteNothing,
  events?: ConnectionEvents,
): Promise<T> {
  let client: pg.PoolClient | undefined;
  let released = false;
  const release = (err?: Error) => {
    if (!client || released) return;
    released = true;
    client.release(err);
  };
  /** Cancels what the connection runs and drops it; true when one was taken (a statement ran out of time). */
  const abandon = (): boolean => {
    if (!client || released) return client !== undefined;
    const c = client as pg.PoolClient & {
      processID?: number;
      secretKey?: number;
      host: string;
      port: number;
      connection?: { stream?: { destroy(): void } };
    };
    if (c.processID != null && c.secretKey != null)
      cancelBackend(c.host, c.port, c.processID, c.secretKey);
    release(new Error('deadline passed'));
    c.connection?.stream?.destroy();
    return true;
  };
  const started = Date.now();
  const budget = Number.isFinite(ms) ? ms : UNBOUNDED_RETRY_MS;
  /** Waits before attempt n + 1; false when that would pass the call's time. */
  const wait = async (n: number, expired: () => boolean): Promise<boolean> => {
    if (expired() || Date.now() - started + pause(n) >= budget) return false;
    await sleep(pause(n));
    return !expired();
  };
  return withinDeadline(
    ms,
    async (expired) => {
      for (let n = 0; ; n++) {
        let taken: pg.PoolClient;
        try {
          taken = await pool.connect();
        } catch (err) {
          if (!dropsConnection(err)) throw err;
          events?.lost();
          if (await wait(n, expired)) continue;
          throw err;
        }
        if (expired()) {
          taken.release(); // too late: hand it back unused
          throw new DatabaseTimeout(ms);
        }
        client = taken;
        released = false;
        try {
          const result = await work(taken);
          events?.succeeded(taken);
          return result;
        } catch (err) {
          if (!dropsConnection(err)) throw err;
          events?.lost(taken);
          release(err instanceof Error ? err : new Error(String(err)));
          client = undefined; // between attempts no statement runs: out of time now is out of reach
          if (again(err) && (await wait(n, expired))) continue;
          throw err;
        } finally {
          release();
        }
      }
    },
    abandon,
  );
}
