import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { storeAlarms, parseAlarm } from '../../src/alarms/send.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Database } from '../../src/db/index.js';
import { lookupOutcomes, pruneOutcomes } from '../../src/db/outcome.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { GroupWriter } from '../../src/telemetry/group-writer.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import { makeEntry } from '../../src/telemetry/kinds.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { describeWith, openTestDb } from '../helper.js';
import { until } from '../wait.js';
import { CutProxy } from './cut-proxy.js';

// An upload whose connection breaks while its statement or its commit runs (a failover) is settled
// on a new connection: answered with what the attempt that committed recorded, or written again
// when none did. The breaks are real: a proxy that cuts the connection right after the server got
// the statement (so it commits while the service never hears back) or instead of sending it, and
// pg_terminate_backend of the backend running it (57P01).

const SENSOR = 10100;

describeWith(['postgres'], 'an upload whose outcome is unknown [postgres]', () => {
  let db: Database;
  let through: Database;
  let proxy: CutProxy;
  let writer: GroupWriter;
  let schema: string;
  const appName = `outcome-${process.pid}`;
  let minute = 0;
  const month = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);
  /** A job of n sensor logs never stored before. */
  const logs = (n: number) =>
    makeJob(
      'log',
      Array.from({ length: n }, (_, i) => ({
        ...makeEntry('sensor', SENSOR, month + minute++ * 60_000, [i], undefined, i),
        site: 1,
      })),
      [1],
    );
  const stored = async (job: ReturnType<typeof logs>) =>
    (
      await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sensor_logs WHERE sensor_id = $1 AND ts = ANY($2::timestamptz[])',
        [SENSOR, job.entries.map((e) => new Date(e.ts).toISOString())],
      )
    )[0].n;
  const deadline = () => Date.now() + 10_000;

  beforeAll(async () => {
    db = await openTestDb('postgres');
    await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 0, imagesPerSite: 0 }));
    [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
    const url = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await CutProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    url.searchParams.set('application_name', appName);
    through = await openPostgres(url.toString(), { schema, max: 4 });
    writer = new GroupWriter(through, new Partitions(through));
    // The month's partition exists and the pool has connections: the next statement is the upload's.
    await writer.write([[logs(1)]], deadline());
  });
  afterAll(async () => {
    await through?.close();
    await proxy?.close();
    await db?.close();
  });

  it('committed, but the answer lost: answered with the counts that attempt recorded', async () => {
    const job = logs(5);
    proxy.arm('after');
    // A second attempt would count these logs as duplicates: stored 5 says the first one's answer was
    // used (whose transaction is not known: the rule evaluator reads its samples back).
    expect(await writer.write([[job]], deadline())).toEqual({
      stored: [{ sensor: 5 }],
      xid: undefined,
    });
    expect(proxy.cuts).toBe(1);
    expect(await stored(job)).toBe(5);
  });

  it('never reached the server: written again, once', async () => {
    const job = logs(3);
    proxy.arm('before');
    expect(await writer.write([[job]], deadline())).toEqual({
      stored: [{ sensor: 3 }],
      xid: expect.stringMatching(/^[0-9]+$/),
    });
    expect(proxy.cuts).toBe(2);
    expect(await stored(job)).toBe(3);
  });

  it('a round of several jobs in one transaction, committed but the answer lost', async () => {
    const [a, b] = [logs(2), logs(4)];
    proxy.arm('after');
    expect((await writer.write([[a], [b]], deadline())).stored).toEqual([
      { sensor: 2 },
      { sensor: 4 },
    ]);
    expect(proxy.cuts).toBe(3);
    expect((await stored(a)) + (await stored(b))).toBe(6);
  });

  it('an alarm sent once counts once, whatever happened to its connection', async () => {
    const send = (type: string) =>
      storeAlarms(through, 1, [
        parseAlarm(
          { alarmType: type, message: 'high', timestamp: new Date().toISOString() },
          0,
          '/0',
        ),
      ]);
    proxy.arm('after');
    const [sent] = await send('outcome-after');
    expect(proxy.cuts).toBe(4);
    expect(sent.status).toBe('created');
    expect(sent.alarm.Occurrences).toBe(1);
    proxy.arm('before');
    const [again] = await send('outcome-after');
    expect(proxy.cuts).toBe(5);
    expect(again.status).toBe('duplicate');
    expect(again.alarm.Occurrences).toBe(2);
    const [{ occurrences }] = await db.query<{ occurrences: number }>(
      `SELECT occurrences FROM site_alarms WHERE alarm_type = 'outcome-after'`,
    );
    expect(occurrences).toBe(2);
  });

  it('its backend terminated (57P01) while it waits: a new connection, and it is written', async () => {
    const job = logs(4);
    // Another session holds the outcomes table: the upload's statement waits for it.
    const holder = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await holder.connect();
    await holder.query(`BEGIN; LOCK TABLE ${schema}.write_outcomes IN EXCLUSIVE MODE`);
    const waiting = () =>
      db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [appName],
      );
    try {
      const written = writer.write([[job]], deadline());
      const first = await until(async () => (await waiting())[0], 'the upload waiting');
      await db.query('SELECT pg_terminate_backend($1)', [first.pid]);
      // The service settles it on a new connection: a lookup, then the upload again, waiting anew.
      await until(
        async () => (await waiting()).some((w) => w.pid !== first.pid),
        'the upload again',
      );
      await holder.query('COMMIT');
      expect((await written).stored).toEqual([{ sensor: 4 }]);
      expect(await stored(job)).toBe(4);
    } finally {
      await holder.end();
    }
  });

  it('outcomes are recorded with the write, and pruned once old', async () => {
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM write_outcomes');
    expect(n).toBeGreaterThanOrEqual(7);
    await db.query(`UPDATE write_outcomes SET at = now() - interval '1 hour'`);
    const fresh = logs(1);
    await writer.write([[fresh]], deadline());
    expect(await pruneOutcomes(db)).toBe(n);
    const [{ left }] = await db.query<{ left: number }>(
      'SELECT count(*)::int AS left FROM write_outcomes',
    );
    expect(left).toBe(1);
    expect((await lookupOutcomes(db, ['00000000-0000-0000-0000-000000000000'])).size).toBe(0);
  });
});
