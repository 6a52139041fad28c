import { existsSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { PrimaryWatch } from '../../src/db/primary.js';
import { describeWith } from '../helper.js';

// The figures behind site_monitor_db_failovers_total and site_monitor_db_unwritable_seconds_total:
// which primary each new connection reached, and how long the pool had none that wrote. The rules
// on a clock of the test's own, then on real connections to the local PostgreSQL: backends
// terminated (the same primary again: no failover, but time without a primary), and a proxy that
// sends new connections elsewhere (over the server's Unix socket, where it names itself otherwise:
// to the pool, another primary).

describe('PrimaryWatch', () => {
  let t = 0;
  const watch = () => new PrimaryWatch(() => t);

  it('counts a failover when a new connection reaches another primary, and the time there was none', () => {
    t = 1000;
    const w = watch();
    w.reached('a', false);
    expect(w.figures()).toEqual({ failovers: 0, unwritableMs: 0 });
    t = 2000;
    w.lost('a');
    t = 2500;
    w.lost(); // refused meanwhile: the outage began at the first sign
    t = 3000;
    expect(w.figures()).toEqual({ failovers: 0, unwritableMs: 1000 }); // under way, counted
    w.reached('b', true); // a standby: still none that writes
    t = 6000;
    w.reached('b', false);
    t = 9000;
    expect(w.figures()).toEqual({ failovers: 1, unwritableMs: 4000 });
  });

  it('the same primary again is no failover; a connection to an earlier one breaking says nothing', () => {
    t = 0;
    const w = watch();
    w.reached('a', false);
    w.lost('a');
    t = 300;
    w.reached('a', false);
    expect(w.figures()).toEqual({ failovers: 0, unwritableMs: 300 });
    w.lost('b'); // not the current primary
    t = 1000;
    w.reached('b', false);
    t = 1200;
    w.lost('a'); // an old connection to the earlier primary
    t = 2000;
    expect(w.figures()).toEqual({ failovers: 1, unwritableMs: 300 });
  });

  it('a call that succeeds on the current primary ends an outage; one on another server does not', () => {
    t = 0;
    const w = watch();
    w.reached('a', false);
    t = 100;
    w.lost(); // a connection refused once
    t = 150;
    w.succeeded(undefined); // a standby's connection, or one not known
    w.succeeded('b');
    t = 200;
    w.succeeded('a');
    t = 5000;
    expect(w.figures()).toEqual({ failovers: 0, unwritableMs: 100 });
  });
});

const SOCKET_DIR = '/var/run/postgresql';

/** A TCP proxy that sends each new connection where `target` says at that moment. */
async function switchingProxy(
  target: () => { host: string; port: number } | { path: string },
): Promise<{ port: number; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target());
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    cut: () => sockets.forEach((s) => s.destroy()),
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}

describeWith(
  ['postgres'],
  'failovers and the time without a primary, on the pool [postgres]',
  () => {
    const url = () => new URL(process.env.TEST_DATABASE_URL ?? 'postgres://unset');
    let db: Database | undefined;
    afterAll(async () => db?.close());

    it('backends terminated: connections made again to the same primary, no failover, the time counted', async () => {
      const appName = `primary-test-${process.pid}`;
      const u = url();
      u.searchParams.set('application_name', appName);
      db = await openPostgres(u.toString(), { max: 2 });
      await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
      expect(db.primary!()).toEqual({ failovers: 0, unwritableMs: 0 });
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ n: number }>(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [appName],
        );
        expect(rows[0].n).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      // The idle connections' loss is seen when the server's notice arrives; the next call reconnects.
      await new Promise((r) => setTimeout(r, 200));
      expect(db.primary!().unwritableMs).toBeGreaterThan(0);
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      const after = db.primary!();
      expect(after.failovers).toBe(0);
      expect(after.unwritableMs).toBeGreaterThan(0);
      expect(after.unwritableMs).toBeLessThan(5000);
      // Over: the count no longer grows.
      await new Promise((r) => setTimeout(r, 100));
      expect(db.primary!().unwritableMs).toBe(after.unwritableMs);
      await db.close();
      db = undefined;
    });

    it.skipIf(!existsSync(`${SOCKET_DIR}/.s.PGSQL.${url().port || 5432}`))(
      'new connections reaching the server as another one: one failover',
      async () => {
        const u = url();
        const [host, port] = [u.hostname, Number(u.port || 5432)];
        let viaSocket = false;
        const proxy = await switchingProxy(() =>
          viaSocket ? { path: `${SOCKET_DIR}/.s.PGSQL.${port}` } : { host, port },
        );
        try {
          u.host = `127.0.0.1:${proxy.port}`;
          db = await openPostgres(u.toString(), { max: 1 });
          const where = `SELECT coalesce(host(inet_server_addr()), 'socket') AS at`;
          expect(await db.query(where)).toEqual([{ at: '127.0.0.1' }]);
          viaSocket = true;
          proxy.cut();
          await new Promise((r) => setTimeout(r, 100));
          expect(await db.query(where)).toEqual([{ at: 'socket' }]);
          const figures = db.primary!();
          expect(figures.failovers).toBe(1);
          expect(figures.unwritableMs).toBeGreaterThan(0);
          expect(figures.unwritableMs).toBeLessThan(5000);
        } finally {
          await db?.close();
          db = undefined;
          await proxy.close();
        }
      },
    );
  },
);
