import { afterAll, beforeAll, expect, it } from 'vitest';
import { expireShelves } from '../../src/alarms/expiry.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';
import { minutesAgo, SENSOR } from './fixtures.js';
import { managementClient, type ManagementClient } from './management-fixtures.js';

// Alarm management under concurrency: two acknowledges of one alarm make one change (one
// `acknowledged`, one `already_acknowledged`, one journal entry); ended shelves taken by several
// instances at once are each ended once. On PostgreSQL the requests are made to wait on the
// alarms' row lock together, so they really overlap; PGlite has one connection and serializes them.

const DEMO = { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 };
const N = 20;

describeEachBackend('alarm management under concurrency', (backend) => {
  let ctx: TestContext;
  let a: ManagementClient;
  let b: ManagementClient;
  let second: Database | undefined; // another instance's pool on the same schema
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    a = managementClient(ctx, await ctx.token('*', { clientId: 'op-a' }));
    b = managementClient(ctx, await ctx.token('*', { clientId: 'op-b' }));
    if (backend === 'postgres') {
      const [{ schema }] = await ctx.db.query<{ schema: string }>(
        'SELECT current_schema() AS schema',
      );
      second = await openPostgres(process.env.TEST_DATABASE_URL!, { schema });
    }
  });
  afterAll(async () => {
    await second?.close();
    await ctx?.close();
  });

  const raiseMany = async (prefix: string) => {
    const res = await a.post('edge/alarms/batch', {
      siteId: 1,
      alarms: Array.from({ length: N }, (_, i) => ({
        sensorID: SENSOR,
        alarmType: `${prefix}${i}`,
        message: 'm',
        timestamp: minutesAgo(1),
      })),
    });
    expect(res.status).toBe(201);
    return res.body.map((r: any) => r.SiteAlarmLogID as string);
  };
  const journalCounts = async (ids: string[], event: string) =>
    ctx.db.query<{ id: string; n: number }>(
      `SELECT a.id, (SELECT count(*)::int FROM alarm_journal j WHERE j.alarm_id = a.id::int8 AND j.event = $2) AS n
         FROM unnest($1::text[]) AS a(id) ORDER BY 1`,
      [ids, event],
    );

  /** Runs the requests while the alarms' rows are locked elsewhere (PostgreSQL), so that they wait together. */
  async function together<T>(ids: string[], requests: () => Promise<T>[]): Promise<T[]> {
    if (!second) return Promise.all(requests());
    let pending!: Promise<T[]>;
    await second.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM site_alarms WHERE alarm_id = ANY($1::int8[]) FOR UPDATE`, [
        ids,
      ]);
      pending = Promise.all(requests());
      // Both requests' statements are waiting for the lock (on connections of the app's pool).
      await until(async () => {
        const [row] = await ctx.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%acknowledged_at = now()%'`,
        );
        return row.n >= 2;
      }, 'two acknowledges waiting on the row locks');
    });
    return pending;
  }

  it('two concurrent acknowledges of the same alarms: one acknowledged, one already_acknowledged, one journal entry each', async () => {
    const ids = await raiseMany('Ack');
    const [first, second_] = await together(ids, () => [
      a.acknowledge(1, ids, 'from a'),
      b.acknowledge(1, ids, 'from b'),
    ]);
    expect(first.status).toBe(200);
    expect(second_.status).toBe(200);
    const rows = await ctx.db.query<{ id: string; by: string }>(
      `SELECT alarm_id::text AS id, acknowledged_by AS by FROM site_alarms WHERE alarm_id = ANY($1::int8[]) ORDER BY 1`,
      [ids],
    );
    for (const [i, id] of ids.entries()) {
      const statuses = [first.body[i].status, second_.body[i].status].sort();
      expect(statuses).toEqual(['acknowledged', 'already_acknowledged']);
      const winner = first.body[i].status === 'acknowledged' ? 'op-a' : 'op-b';
      expect(rows.find((r) => r.id === id)!.by).toBe(winner);
    }
    expect((await journalCounts(ids, 'acknowledged')).map((r) => r.n)).toEqual(ids.map(() => 1));
  });

  it('ended shelves taken by several instances at once are each ended once', async () => {
    const ids = await raiseMany('Shelf');
    expect((await a.shelve(1, ids, 60)).status).toBe(200);
    await ctx.db.query(
      `UPDATE site_alarms SET shelved_until = now() - interval '1 second' WHERE alarm_id = ANY($1::int8[])`,
      [ids],
    );
    // This suite's app checks too (every second); so do these, together.
    const pools = second ? [ctx.db, second, ctx.db, second] : [ctx.db, ctx.db];
    await Promise.all(pools.map((db) => expireShelves(db, 3)));
    await until(async () => {
      const [row] = await ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM site_alarms WHERE alarm_id = ANY($1::int8[]) AND shelved_until IS NOT NULL`,
        [ids],
      );
      return row.n === 0;
    }, 'every shelf ended');
    expect((await journalCounts(ids, 'unshelved')).map((r) => r.n)).toEqual(ids.map(() => 1));
    const events = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM stream_events WHERE type = 'alarm' AND data::json->>'status' = 'unshelved'
          AND data::json->'alarm'->>'SiteAlarmLogID' = ANY($1::text[])`,
      [ids],
    );
    expect(events[0].n).toBe(N);
  });
});
