import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DatabaseTimeout, isDatabaseUnavailable, isOutOfTime } from '../../src/db/deadline.js';
import { onConnection } from '../../src/db/postgres-connection.js';

// A read that runs out of time says so; "the database is unavailable" is for a database out of
// reach. The pool's deadline tells them apart: no connection in time is unavailability, a statement
// still running at the deadline is a read out of time.

const never = <T>() => new Promise<T>(() => {});

describe('a call out of time against a database out of reach', () => {
  it('no connection within the deadline: unavailable, not out of time', async () => {
    const pool = { connect: () => never<pg.PoolClient>() } as unknown as pg.Pool;
    const err = await onConnection(pool, 50, async () => 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseTimeout);
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isOutOfTime(err)).toBe(false);
  });

  it('a statement still running at the deadline: out of time, and its connection given up', async () => {
    const released: unknown[] = [];
    const client = { release: (e?: unknown) => released.push(e) } as unknown as pg.PoolClient;
    const pool = { connect: async () => client } as unknown as pg.Pool;
    const err = await onConnection(pool, 50, () => never<number>()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseTimeout);
    expect(isOutOfTime(err)).toBe(true);
    expect(released).toHaveLength(1);
    expect(released[0]).toBeInstanceOf(Error);
  });

  it("the server's statement_timeout is out of time; a refused connection is not", () => {
    expect(isOutOfTime(Object.assign(new Error('canceling statement'), { code: '57014' }))).toBe(
      true,
    );
    expect(isOutOfTime(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
  });
});
