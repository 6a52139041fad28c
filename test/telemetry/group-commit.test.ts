import { oldBefore } from '../../src/telemetry/archive/upload-days.js';
import { expect, it } from 'vitest';
import { HttpError } from '../../src/errors.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { TelemetryWriter } from '../../src/telemetry/writer.js';
import { describeEachBackend, instrument } from '../helper.js';
import { count, countingWriter, SENSOR, SENSOR_2, suiteApp } from './fixtures.js';
import { until } from '../wait.js';

describeEachBackend('telemetry group commit', (backend) => {
  const t = suiteApp(backend);

  // From yesterday's start: logs older than that may fall in archived days, which an upload moves
  // back to rows first, in statements of their own (archive-pass.test.ts); these count statements.
  const minute = (m: number) => new Date(oldBefore(Date.now()) + m * 60_000).toISOString();
  /** A request's deadline, as the upload routes give it (WRITE_TIMEOUT_MS from its arrival). */
  const soon = (ms = 10_000) => Date.now() + ms;

  it('answers many concurrent single uploads each with its own counts, every record stored once', async () => {
    // (Readings of one sensor share a time: were they older than one another, their order would decide which count.)
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        i % 2
          ? t.post('logs/sensor', { sensorID: SENSOR, value: i, timestamp: minute(i) })
          : t.post('readings/sensor', {
              sensorID: 10102 + (i % 8),
              value: i,
              timestamp: minute(0),
            }),
      ),
    );
    for (const r of results)
      expect(r).toEqual({ status: 201, body: { received: 1, stored: 1, duplicates: 0 } });
    expect(await count(t.ctx.db, 'sensor_logs', 'sensor_id = $1', [SENSOR])).toBe(60);
  });

  it('gives concurrent requests for one key the counts they would have one after another', async () => {
    const same = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.post('logs/sensor', { sensorID: SENSOR_2, value: 1, timestamp: minute(500) }),
      ),
    );
    expect(same.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(same.reduce((n, r) => n + r.body.stored, 0)).toBe(1);
    expect(same.reduce((n, r) => n + r.body.duplicates, 0)).toBe(19);
    const changing = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.post('logs/sensor', { sensorID: SENSOR_2, value: 100 + i, timestamp: minute(501) }),
      ),
    );
    expect(changing.map((r) => r.body.stored)).toEqual(Array(20).fill(1));
    const rows = await t.ctx.db.query<{ value: number }>(
      `SELECT value FROM sensor_logs WHERE sensor_id = $1 AND ts = $2`,
      [SENSOR_2, minute(501)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].value).toBeGreaterThanOrEqual(100);
  });

  /** A writer on a database that counts the statements sent to it. */
  const writerWith = (group: boolean) =>
    countingWriter(t.ctx.db, { group, maxInFlight: 1, maxPerLane: 1 });
  // Entries reach the writer with their site found (demo ids: site * 10000 + n).
  const entry = (m: number, value: unknown = m, id = SENSOR): Entry => ({
    kind: 'sensor',
    id,
    ts: Date.parse(minute(m)),
    values: [value],
    index: 0,
    site: Math.floor(id / 10_000),
  });
  const job = (...entries: Entry[]) => makeJob('log', entries, [1]);

  it('writes requests that arrive together, or queue up while a write is in flight, in one statement', async () => {
    const { writer, sent } = await writerWith(true);
    const counts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.submit(job(entry(1000 + i)), soon())),
    );
    expect(counts).toEqual(Array(50).fill({ received: 1, stored: 1, duplicates: 0 }));
    expect(sent).toHaveLength(1); // the 50 that arrived together, in one statement
    const ungrouped = await writerWith(false);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => ungrouped.writer.submit(job(entry(1100 + i)), soon())),
    );
    expect(ungrouped.sent).toHaveLength(50);
    // While a write is in flight, what arrives waits and then goes together.
    const late = await writerWith(true);
    const first = late.writer.submit(job(entry(1200)), soon());
    await new Promise((r) => setImmediate(r));
    const rest = Array.from({ length: 30 }, (_, i) =>
      late.writer.submit(job(entry(1201 + i)), soon()),
    );
    await Promise.all([first, ...rest]);
    expect(late.sent).toHaveLength(2);
  });

  it('says it is busy while uploads wait for a write slot (the rollup refresher then yields)', async () => {
    // Writes are held until the gate opens, so the second upload must wait for the only slot.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { writer } = await countingWriter(
      t.ctx.db,
      { group: true, maxInFlight: 1, maxPerLane: 1 },
      gate,
    );
    expect(writer.busy()).toBe(false);
    const first = writer.submit(job(entry(1301)), soon());
    await new Promise((r) => setImmediate(r)); // the first is being written (held at the gate)
    const waiting = writer.submit(job(entry(1302)), soon());
    await until(() => writer.busy());
    open();
    await Promise.all([first, waiting]);
    // Nothing waits any more: busy ends with the window it looks back over.
    expect(writer.busy(0)).toBe(false);
  });

  it('keeps at most maxPerLane writes of a log lane and maxReadings of the readings lane in flight', async () => {
    // Every write is held at the gate; what each lane has sent shows how many it has in flight.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    // Room for one write more than the lanes' limits together.
    const { writer, sent: statements } = await countingWriter(
      t.ctx.db,
      { group: true, maxInFlight: 7, maxPerLane: 3, maxReadings: 2 },
      gate,
    );
    const sent = {
      get sensor() {
        return statements.filter((sql) => /INSERT INTO sensor_logs/.test(sql)).length;
      },
      get pump() {
        return statements.filter((sql) => /INSERT INTO pump_logs/.test(sql)).length;
      },
      get readings() {
        return statements.filter((sql) => /INSERT INTO current_readings/.test(sql)).length;
      },
    };
    const reading = (id: number): Entry => ({
      kind: 'sensor',
      id,
      ts: Date.parse(minute(1400)),
      values: [],
      record: { sensorID: id, value: 1, timestamp: minute(1400) },
      index: 0,
      site: 1,
    });
    // One at a time, each once the one before is in flight (requests queued together would share a statement).
    const answers: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        answers.push(writer.submit(job(entry(1401 + i)), soon()));
        await until(() => sent.sensor === Math.min(i + 1, 3) || sent.sensor > 3, 'a sensor write');
      }
      for (let i = 0; i < 3; i++) {
        answers.push(writer.submit(makeJob('reading', [reading(10102 + i)], [1]), soon()));
        await until(() => sent.readings === Math.min(i + 1, 2) || sent.readings > 2, 'a reading');
      }
      // Another lane still has room: once its write is sent, every lane has had its turn.
      const pump: Entry = {
        ...entry(1401),
        kind: 'pump',
        id: 10401,
        values: [10, true, 50, 1, 'ok'],
      };
      answers.push(writer.submit(makeJob('log', [pump], [1]), soon()));
      await until(() => sent.pump === 1, 'the pump write');
      expect(sent).toEqual({ sensor: 3, pump: 1, readings: 2 });
    } finally {
      open();
      await Promise.allSettled(answers);
    }
    await Promise.all(answers);
    // The queued ones went once a write of their lane ended.
    expect(sent).toEqual({ sensor: 4, pump: 1, readings: 3 });
  });

  it('puts a key written twice in one group in a later statement of the same transaction', async () => {
    const { writer, sent } = await writerWith(true);
    const counts = await Promise.all([
      writer.submit(job(entry(2000, 1)), soon()),
      writer.submit(job(entry(2000, 1), entry(2001, 1)), soon()),
      writer.submit(job(entry(2000, 2)), soon()),
      writer.submit(job(entry(2000, 2), entry(2002, 5)), soon()),
    ]);
    expect(counts.map((c) => [c.stored, c.duplicates])).toEqual([
      [1, 0],
      [1, 1],
      [1, 0],
      [1, 1],
    ]);
    expect(sent).toHaveLength(4); // one transaction of four rounds, a statement each
    const [row] = await t.ctx.db.query(
      `SELECT value FROM sensor_logs WHERE sensor_id = $1 AND ts = $2`,
      [SENSOR, minute(2000)],
    );
    expect(row.value).toBe(2);
  });

  it('writes new keys with a plain INSERT, and upserts the same jobs when a key was already stored', async () => {
    const { writer, sent } = await writerWith(true);
    expect(await writer.submit(job(entry(2500, 1), entry(2501, 1)), soon())).toEqual({
      received: 2,
      stored: 2,
      duplicates: 0,
    });
    expect(sent.map((sql) => /ON CONFLICT \(sensor_id, ts\) DO UPDATE/.test(sql))).toEqual([false]);
    sent.length = 0;
    expect(await writer.submit(job(entry(2501, 2), entry(2502, 1)), soon())).toEqual({
      received: 2,
      stored: 2,
      duplicates: 0,
    });
    expect(sent.map((sql) => /ON CONFLICT \(sensor_id, ts\) DO UPDATE/.test(sql))).toEqual([
      false,
      true,
    ]);
    const rows = await t.ctx.db.query(
      `SELECT value FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts <= $3 ORDER BY ts`,
      [SENSOR, minute(2500), minute(2502)],
    );
    expect(rows.map((r) => r.value)).toEqual([1, 2, 1]);
  });

  it('fails only the job that the database refuses, not the others of its group', async () => {
    const { writer } = await writerWith(true);
    const outcomes = await Promise.allSettled([
      writer.submit(job(entry(3000)), soon()),
      writer.submit(job(entry(3001)), soon()),
      writer.submit(job(entry(3002, 'not a number')), soon()),
      writer.submit(job(entry(3003)), soon()),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const reason = (outcomes[2] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(HttpError);
    expect(reason.statusCode).toBe(500);
    expect(
      await count(t.ctx.db, 'sensor_logs', 'sensor_id = $1 AND ts >= $2 AND ts <= $3', [
        SENSOR,
        minute(3000),
        minute(3003),
      ]),
    ).toBe(3);
  });

  it('keeps uploads of other tables going while one table does not answer, and answers the stuck ones 500 at their deadline', async () => {
    // Statements that write sensor_logs never answer (a lock held elsewhere); the rest of the database works.
    let stuckStatements = 0;
    const stuck = instrument(t.ctx.db, (db) => ({
      query: (sql, params) =>
        /INSERT INTO sensor_logs/.test(sql)
          ? (stuckStatements++, new Promise<never>(() => {}))
          : db.query(sql, params),
    }));
    const partitions = new Partitions(t.ctx.db);
    const writer = new TelemetryWriter(stuck, partitions, {
      group: true,
      maxInFlight: 2,
      maxPerLane: 1,
    });
    // Their deadline (2 s) bounds the test: a write stuck for ever is answered 500 then, and not before.
    let sensorAnswered = false;
    const sensorLogs = [4000, 4001, 4002].map((m) =>
      writer.submit(job(entry(m)), soon(2000)).finally(() => (sensorAnswered = true)),
    );
    // The first is in flight, the others wait in its lane.
    await until(() => stuckStatements === 1, 'the first sensor write to be sent');
    const pump: Entry = {
      kind: 'pump',
      id: 10401,
      ts: Date.parse(minute(4000)),
      values: [],
      record: { sitePumpID: 10401, running: true },
      index: 0,
      site: 1,
    };
    const reading = await writer.submit(makeJob('reading', [pump], [1]), soon());
    expect(reading).toMatchObject({ received: 1 });
    // Not behind the stuck sensor writes: none of them has been answered yet.
    expect(sensorAnswered).toBe(false);
    expect(stuckStatements).toBe(1);
    const outcomes = await Promise.allSettled(sensorLogs);
    for (const o of outcomes)
      expect((o as PromiseRejectedResult).reason).toMatchObject({ statusCode: 500 });
    expect(
      await count(t.ctx.db, 'sensor_logs', 'sensor_id = $1 AND ts >= $2 AND ts <= $3', [
        SENSOR,
        minute(4000),
        minute(4002),
      ]),
    ).toBe(0);
  });
});
