import type pg from 'pg';
import { cancelBackend, DatabaseTimeout, withinDeadline } from './deadline.js';

/**
 * Takes a connection of the pool and runs work on it, all within ms. Past the deadline the backend is asked to
 * cancel its statement and the connection is destroyed (the pool opens a new one when needed): a
 * server that stopped answering or a statement waiting on a lock never keeps a pool slot.
 */
export function onConnection<T>(
  pool: pg.Pool,
  ms: number,
  work: (c: pg.PoolClient) => Promise<T>,
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
  return withinDeadline(
    ms,
    async (expired) => {
      const taken = await pool.connect();
      if (expired()) {
        taken.release(); // too late: hand it back unused
        throw new DatabaseTimeout(ms);
      }
      client = taken;
      try {
        return await work(taken);
      } finally {
        release();
      }
    },
    abandon,
  );
}
