import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  DatabaseTimeout,
  dropsConnection,
  isDatabaseUnavailable,
  wroteNothing,
} from '../../src/db/deadline.js';
import { metEarlierAttempt, outcomeUnknown } from '../../src/db/outcome.js';
import { onConnection } from '../../src/db/postgres-connection.js';
import { readsOnly } from '../../src/db/postgres.js';

// What a failover looks like to the pool, and what it does about it: a connection that broke, whose
// server shuts down or is now a standby is dropped, never handed out again, and the call takes a new
// one while its time lasts; none of these is an answer for the client by itself.

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
const terminated = () => new Error('Connection terminated unexpectedly');

describe('errors of a failover', () => {
  it('connection lost, shutdown, cannot connect now, read-only standby: the connection is dropped', () => {
    for (const err of [
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P02'),
      coded('57P03', 'the database system is starting up'),
      coded('25006', 'cannot execute INSERT in a read-only transaction'),
      coded('08006'),
      coded('08P01'),
      coded('ECONNRESET'),
      coded('ECONNREFUSED'),
      terminated(),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(dropsConnection(err), err.message).toBe(true);
      expect(isDatabaseUnavailable(err), err.message).toBe(true);
    }
  });

  it('a statement out of time, a lock timeout, a bad value or a key met: the connection stays', () => {
    for (const err of [
      coded('57014'),
      coded('55P03'),
      coded('22P02'),
      coded('23505'),
      new DatabaseTimeout(100),
    ])
      expect(dropsConnection(err), err.message).toBe(false);
    // A closed pool is not a failover: nothing to reconnect to.
    expect(dropsConnection(new Error('Cannot use a pool after calling end on the pool'))).toBe(
      false,
    );
  });

  it('a write a standby refused wrote nothing; a broken connection leaves its outcome unknown', () => {
    expect(wroteNothing(coded('25006'))).toBe(true);
    expect(outcomeUnknown(coded('25006'))).toBe(false);
    expect(outcomeUnknown(coded('57P01'))).toBe(true);
    expect(outcomeUnknown(terminated())).toBe(true);
    expect(outcomeUnknown(new DatabaseTimeout(100))).toBe(false);
    expect(outcomeUnknown(coded('23505'))).toBe(false);
    expect(
      metEarlierAttempt(Object.assign(coded('23505'), { constraint: 'write_outcomes_pkey' })),
    ).toBe(true);
    expect(
      metEarlierAttempt(Object.assign(coded('23505'), { constraint: 'sensor_logs_pkey' })),
    ).toBe(false);
  });
});

/** A pool whose connect() fails `refusals` times, then hands out clients that record their release. */
function pool(refusals: number) {
  const released: (Error | undefined)[] = [];
  let connects = 0;
  const p = {
    connect: async () => {
      connects++;
      if (connects <= refusals) throw terminated();
      return { release: (e?: Error) => released.push(e) } as unknown as pg.PoolClient;
    },
  } as unknown as pg.Pool;
  return { pool: p, released, connects: () => connects };
}

describe('the pool through a failover', () => {
  it('asks again for a connection refused or cut, within the call’s time', async () => {
    const p = pool(3);
    expect(await onConnection(p.pool, 5000, async () => 'written')).toBe('written');
    expect(p.connects()).toBe(4);
  });

  it('gives up when the time is over, as a database out of reach', async () => {
    const p = pool(1000);
    const err = await onConnection(p.pool, 300, async () => 1).catch((e: unknown) => e);
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(p.connects()).toBeGreaterThan(1);
  });

  it('drops a connection that landed on a standby and runs the work again on another', async () => {
    const p = pool(0);
    let runs = 0;
    const result = await onConnection(p.pool, 5000, async () => {
      if (++runs === 1) throw coded('25006', 'cannot execute INSERT in a read-only transaction');
      return 'on the primary';
    });
    expect(result).toBe('on the primary');
    expect(p.released).toHaveLength(2);
    expect(p.released[0]).toBeInstanceOf(Error); // destroyed, not back in the pool
    expect(p.released[1]).toBeUndefined();
  });

  it('a write whose connection broke is not run again blindly: dropped, and the error is its caller’s', async () => {
    const p = pool(0);
    let runs = 0;
    const err = await onConnection(p.pool, 5000, async () => {
      runs++;
      throw coded('57P01', 'terminating connection due to administrator command');
    }).catch((e: unknown) => e);
    expect(runs).toBe(1);
    expect(outcomeUnknown(err)).toBe(true);
    expect(p.released).toHaveLength(1);
    expect(p.released[0]).toBeInstanceOf(Error);
  });

  it('a read whose connection broke runs again on another', async () => {
    const p = pool(0);
    let runs = 0;
    const rows = await onConnection(
      p.pool,
      5000,
      async () => {
        if (++runs === 1) throw terminated();
        return [1];
      },
      dropsConnection,
    );
    expect(rows).toEqual([1]);
    expect(runs).toBe(2);
  });
});

describe('which plain statements run again on a new connection', () => {
  it('reads only: yes; anything that writes, locks or notifies: no', () => {
    expect(readsOnly('SELECT 1')).toBe(true);
    expect(readsOnly('  with x AS (SELECT 1) SELECT * FROM x')).toBe(true);
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'WITH w AS (INSERT INTO t VALUES (1) RETURNING 1) SELECT * FROM w',
      'WITH d AS (DELETE FROM t RETURNING 1) SELECT count(*) FROM d',
      'SELECT * FROM t FOR UPDATE SKIP LOCKED',
      'SELECT * FROM t FOR NO KEY UPDATE',
      "SELECT pg_notify('c', '')",
      'SELECT pg_try_advisory_xact_lock(1, 2)',
      "SELECT nextval('s')",
      'UPDATE t SET a = 1',
    ])
      expect(readsOnly(sql), sql).toBe(false);
  });
});
