import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { evaluatePass, RuleEvaluator } from '../../src/alarms/rules/evaluator.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { upsertClient } from '../../src/auth/clients.js';
import { bearer, describeEachBackend, describeWith, openTestDb, testSettings } from '../helper.js';
import { SENSOR, SENSOR_2, SITE2_SENSOR } from '../telemetry/fixtures.js';
import { signal, until } from '../wait.js';
import { alarmsOf, importRules, ruleState, secondsAgo } from './rules-fixtures.js';

// Rule state lives in the database with the evaluator's position: an evaluator that stops (a
// restart, a crash between the upload's commit and the evaluation) leaves nothing unevaluated and
// nothing to raise twice; two instances evaluating one database raise each alarm once.

async function instance(db: Database): Promise<{ app: FastifyTypebox; token: string }> {
  const app = await buildApp(testSettings(), { db, logger: false });
  await app.ready();
  await upsertClient(db, { clientId: 'edge', clientSecret: 'secret-123456', siteIds: '*' });
  const res = await app.inject({
    method: 'POST',
    url: '/token',
    payload: { clientId: 'edge', clientSecret: 'secret-123456' },
  });
  return { app, token: res.json().accessToken };
}

const upload = async (i: { app: FastifyTypebox; token: string }, url: string, payload: unknown) => {
  const res = await i.app.inject({
    method: 'POST',
    url: `/v1/edge/${url}`,
    headers: { ...bearer(i.token), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  expect(res.statusCode).toBe(201);
};

describeEachBackend('alarm rules across restarts', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({}));
    await importRules(db, [
      {
        AlarmRuleID: 1,
        SiteSensorID: SENSOR,
        Condition: 'above',
        Limit: 10,
        Deadband: 5,
        AlarmType: 'R1',
      },
    ]);
  });
  afterAll(async () => db?.close());

  it('keeps its state through a restart, and evaluates after a crash what was stored before it', async () => {
    let one = await instance(db);
    await upload(one, 'logs/sensor', { sensorID: SENSOR, value: 11, timestamp: secondsAgo(100) });
    await until(async () => (await alarmsOf(db, 'R1')).length, 'the alarm');
    await one.app.close();

    // Restarted: the condition still holds (inside the deadband), a true sample raises nothing new,
    // and a sample older than the newest evaluated is late.
    one = await instance(db);
    await upload(one, 'logs/sensor/batch', [
      { sensorID: SENSOR, value: 7, timestamp: secondsAgo(90) },
      { sensorID: SENSOR, value: 12, timestamp: secondsAgo(80) },
    ]);
    await upload(one, 'logs/sensor', { sensorID: SENSOR, value: 0, timestamp: secondsAgo(95) });
    await one.app.alarmRules.evaluator.settle();
    expect(await alarmsOf(db, 'R1')).toMatchObject([{ occurrences: 1, resolved_at: null }]);

    // A crash between the commit and the evaluation: the evaluator stops before this upload; the
    // next instance finds it and clears the alarm.
    await one.app.alarmRules.close();
    await upload(one, 'logs/sensor', { sensorID: SENSOR, value: 5, timestamp: secondsAgo(70) });
    expect((await alarmsOf(db, 'R1'))[0].resolved_at).toBeNull();
    await one.app.close();
    const two = await instance(db);
    await until(
      async () => (await alarmsOf(db, 'R1'))[0].resolved_at,
      'the alarm resolved after the restart',
    );
    expect(await alarmsOf(db, 'R1')).toMatchObject([{ resolved_by: 'rule:1', occurrences: 1 }]);
    await two.app.close();
  });

  it('a pass that fails (rolled back) leaves position and state for the next one', async () => {
    await importRules(db, [
      { AlarmRuleID: 2, SiteSensorID: SENSOR_2, Condition: 'below', Limit: 0, AlarmType: 'R2' },
    ]);
    const one = await instance(db);
    await one.app.alarmRules.close();
    await upload(one, 'logs/sensor', { sensorID: SENSOR_2, value: -1, timestamp: secondsAgo(10) });
    // A pass whose transaction fails after its work: nothing of it stays.
    const failing: Database = {
      ...db,
      transaction: (fn) =>
        db.transaction(async (tx) => {
          await fn(tx);
          throw new Error('crash before commit');
        }),
    };
    await expect(evaluatePass(failing, { log: one.app.log })).rejects.toThrow(
      'crash before commit',
    );
    expect(await alarmsOf(db, 'R2')).toEqual([]);
    await evaluatePass(db, { log: one.app.log });
    await evaluatePass(db, { log: one.app.log });
    expect(await alarmsOf(db, 'R2')).toMatchObject([{ occurrences: 1, value: -1, source: 'rule' }]);
    await one.app.close();
  });

  it('a pass that began before an upload stamped "now" committed evaluates it (not ahead of the clock)', async () => {
    await importRules(db, [
      { AlarmRuleID: 3, SiteSensorID: SENSOR_2, Condition: 'above', Limit: 100, AlarmType: 'R3' },
    ]);
    const one = await instance(db);
    await one.app.alarmRules.close();
    // The pass begins; the upload, stamped after that, commits before the pass reads the events.
    const began = Date.now();
    const late: Database = {
      ...db,
      transaction: async (fn) => {
        await until(async () => Date.now() > began, 'the clock to move on');
        await upload(one, 'readings/sensor', {
          sensorID: SENSOR_2,
          value: 150,
          timestamp: new Date().toISOString(),
        });
        return db.transaction(fn);
      },
    };
    await evaluatePass(late, { log: one.app.log });
    expect(await alarmsOf(db, 'R3')).toMatchObject([{ value: 150, source: 'rule' }]);
    await one.app.close();
  });
});

describeEachBackend(
  'alarm rules: rows written only when more than the newest sample changed',
  (backend) => {
    let db: Database;
    let one: { app: FastifyTypebox; token: string };
    const RULE = 4;
    const SITE2_SENSOR_2 = SITE2_SENSOR + 1;
    const rowOf = async (id: number) =>
      (
        await db.query<{ last_ts: Date | null; raised: boolean }>(
          'SELECT last_ts, raised FROM alarm_rules WHERE rule_id = $1',
          [id],
        )
      )[0];
    const unsavedIds = async () => {
      const [{ unsaved }] = await db.query<{ unsaved: string }>(
        'SELECT unsaved FROM alarm_rule_cursor',
      );
      return (JSON.parse(unsaved) as number[][]).map(([id]) => id);
    };
    beforeAll(async () => {
      db = await openTestDb(backend);
      await importDocument(db, generateDemo({}));
      one = await instance(db);
      // Passes run here, one at a time, on what was committed.
      await one.app.alarmRules.close();
    });
    afterAll(async () => {
      await one?.app.close();
      await db?.close();
    });
    const pass = () => evaluatePass(db, { log: one.app.log });

    it('notes the newest sample with the position, which keeps later late samples out; a transition writes the row', async () => {
      await importRules(db, [
        {
          AlarmRuleID: RULE,
          SiteSensorID: SITE2_SENSOR,
          Condition: 'above',
          Limit: 50,
          AlarmType: 'ROW',
        },
      ]);
      await pass();
      const sample = async (value: number, s: number, sensor = SITE2_SENSOR) => {
        await upload(one, 'logs/sensor', { sensorID: sensor, value, timestamp: secondsAgo(s) });
        await pass();
      };
      // The first sample writes the row.
      await sample(10, 100);
      const first = await rowOf(RULE);
      expect(first.last_ts).not.toBeNull();
      // A newer one, nothing else changed: the row stays, the sample is noted with the position.
      await sample(20, 80);
      expect(await rowOf(RULE)).toEqual(first);
      expect(await unsavedIds()).toEqual([RULE]);
      expect(await ruleState(db, RULE)).toMatchObject({ lastValue: 20, active: false });
      // Older than that one: late, whatever its value (the row's sample is older still).
      await sample(60, 90);
      expect(await alarmsOf(db, 'ROW')).toEqual([]);
      expect(await ruleState(db, RULE)).toMatchObject({ lastValue: 20 });
      // Through a restart too.
      await one.app.close();
      one = await instance(db);
      await one.app.alarmRules.close();
      await sample(70, 85);
      expect(await alarmsOf(db, 'ROW')).toEqual([]);
      // A transition writes the row (and the note goes).
      await sample(60, 70);
      expect(await alarmsOf(db, 'ROW')).toMatchObject([{ value: 60, resolved_at: null }]);
      expect(await rowOf(RULE)).toMatchObject({ raised: true });
      expect((await rowOf(RULE)).last_ts!.getTime()).toBeGreaterThan(first.last_ts!.getTime());
      expect(await unsavedIds()).toEqual([]);
      // Noted again; then the import moves the rule to other equipment: it starts afresh, and a
      // sample older than the note is not late for it.
      await sample(55, 60);
      expect(await unsavedIds()).toEqual([RULE]);
      await importRules(db, [
        {
          AlarmRuleID: RULE,
          SiteSensorID: SITE2_SENSOR_2,
          Condition: 'above',
          Limit: 50,
          AlarmType: 'ROW',
        },
      ]);
      expect(await alarmsOf(db, 'ROW')).toMatchObject([{ resolved_by: 'rule:4' }]);
      await sample(65, 65, SITE2_SENSOR_2);
      expect(await alarmsOf(db, 'ROW')).toMatchObject([
        { value: 60, resolved_by: 'rule:4' },
        { value: 65, resolved_at: null },
      ]);
    });

    it('past a thousand noted samples a pass writes all their rows and empties the list', async () => {
      // 1,000 rules on one sensor, never past their limit.
      await importRules(
        db,
        Array.from({ length: 1000 }, (_, i) => ({
          AlarmRuleID: 100 + i,
          SiteSensorID: SITE2_SENSOR,
          Condition: 'above',
          Limit: 1000,
          AlarmType: `MANY_${i}`,
        })),
      );
      const sample = async (value: number, s: number) => {
        await upload(one, 'logs/sensor', {
          sensorID: SITE2_SENSOR,
          value,
          timestamp: secondsAgo(s),
        });
        await pass();
      };
      await sample(1, 50); // rows: their first sample
      await sample(2, 40); // noted
      expect((await unsavedIds()).length).toBe(1000);
      const [{ n }] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM alarm_rules WHERE rule_id >= 100 AND last_value = 1`,
      );
      expect(n).toBe(1000);
      await sample(3, 30); // flushed: every row has its newest sample
      expect(await unsavedIds()).toEqual([]);
      const [{ m }] = await db.query<{ m: number }>(
        `SELECT count(*)::int AS m FROM alarm_rules WHERE rule_id >= 100 AND last_value = 3`,
      );
      expect(m).toBe(1000);
      expect(await ruleState(db, 100)).toMatchObject({ lastValue: 3, active: false });
    });
  },
);

describeEachBackend('alarm rules: two instances storing events of the same text', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({}));
    await importRules(db, [
      { AlarmRuleID: 1, SiteSensorID: SENSOR, Condition: 'above', Limit: 10, AlarmType: 'TWIN' },
    ]);
  });
  afterAll(async () => db?.close());

  it("evaluates each upload on its own samples, not on this instance's entries of another upload of that text", async () => {
    const a = await instance(db);
    const b = await instance(db);
    // b only stores; a evaluates what both stored, in one pass after a's upload.
    await b.app.alarmRules.close();
    await a.app.alarmRules.evaluator.settle();
    const t0 = Date.now() - 60_000;
    const t1 = t0 + 30_000;
    const at = (t: number) => new Date(t).toISOString();
    // No key in common (plain INSERTs, both), and the same event text: site 1, sensors, the two
    // sensors, t0 to t1, two records. b's upload has the newest sample of SENSOR, above the limit.
    await upload(b, 'logs/sensor/batch', [
      { sensorID: SENSOR, value: 20, timestamp: at(t1) },
      { sensorID: SENSOR_2, value: 1, timestamp: at(t0) },
    ]);
    await upload(a, 'logs/sensor/batch', [
      { sensorID: SENSOR, value: 5, timestamp: at(t0) },
      { sensorID: SENSOR_2, value: 1, timestamp: at(t1) },
    ]);
    const events = await db.query<{ xid: string; data: string }>(
      `SELECT xid::text AS xid, data FROM stream_events WHERE type = 'logs' ORDER BY xid, id`,
    );
    expect(events).toHaveLength(2);
    expect(events[0].data).toBe(events[1].data);
    expect(events[0].xid).not.toBe(events[1].xid);
    await a.app.alarmRules.evaluator.settle();
    // b's event holds SENSOR's sample of t1 (20): raised with it. (Taking a's entries for b's event
    // would evaluate 5 twice and raise nothing; a's own sample of t0 is late after it.)
    expect(await alarmsOf(db, 'TWIN')).toMatchObject([
      { value: 20, first_seen: new Date(t1), occurrences: 1, resolved_at: null },
    ]);
    expect(await ruleState(db, 1)).toMatchObject({ lastTs: t1, lastValue: 20 });
    await Promise.all([a.app.close(), b.app.close()]);
  });
});

describeWith(['postgres'], 'alarm rules on two instances [postgres]', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb('postgres');
    await importDocument(db, generateDemo({}));
    await importRules(
      db,
      [SENSOR, SENSOR_2].map((id, i) => ({
        AlarmRuleID: i + 1,
        SiteSensorID: id,
        Condition: 'above',
        Limit: 10,
        AlarmType: `TWO_${i + 1}`,
      })),
    );
  });
  afterAll(async () => db?.close());

  it('two instances uploading and evaluating side by side raise and clear each alarm once', async () => {
    const a = await instance(db);
    const b = await instance(db);
    const t0 = Date.now() - 600_000;
    // 41 cycles of above / below for two sensors, half through each instance, concurrently. Samples
    // that commit after a newer one was evaluated are late (ignored), whatever their order; the
    // newest sample of each sensor (above) never is.
    const uploads = [];
    for (let n = 0; n <= 40; n++)
      for (const [k, id] of [SENSOR, SENSOR_2].entries())
        uploads.push(
          upload(n % 2 ? a : b, 'logs/sensor', {
            sensorID: id,
            value: n % 2 ? 5 : 20,
            timestamp: new Date(t0 + n * 1000 + k).toISOString(),
          }),
        );
    await Promise.all(uploads);
    // Extra passes from both, at once, while they also run on their own.
    await Promise.all([
      ...Array.from({ length: 4 }, () => evaluatePass(db, { log: a.app.log })),
      a.app.alarmRules.evaluator.settle(),
      b.app.alarmRules.evaluator.settle(),
    ]);
    await a.app.alarmRules.evaluator.settle();
    const check = async (open: number) => {
      for (const type of ['TWO_1', 'TWO_2']) {
        const alarms = await alarmsOf(db, type);
        // Every raise is followed by its clear; none twice: each alarm has one occurrence, and only
        // the alarm of the newest sample (when above) is open.
        expect(alarms.every((x) => x.occurrences === 1)).toBe(true);
        expect(alarms.filter((x) => !x.resolved_at).length).toBe(open);
        const [{ n }] = await db.query<{ n: number }>(
          `SELECT count(DISTINCT first_seen)::int AS n FROM site_alarms WHERE alarm_type = $1`,
          [type],
        );
        expect(n).toBe(alarms.length);
        expect(alarms.length).toBeGreaterThan(0);
      }
    };
    // The newest samples are above: each sensor's alarm is open.
    await check(1);
    // Newer samples below, through the other instance: both cleared.
    for (const [k, id] of [SENSOR, SENSOR_2].entries())
      await upload(a, 'logs/sensor', {
        sensorID: id,
        value: 5,
        timestamp: new Date(t0 + 41_000 + k).toISOString(),
      });
    await a.app.alarmRules.evaluator.settle();
    await check(0);
    await Promise.all([a.app.close(), b.app.close()]);
  });

  it('settles once a pass of its own has read what was committed before, not on finding the position taken', async () => {
    await importRules(db, [
      { AlarmRuleID: 3, SiteSensorID: SENSOR, Condition: 'above', Limit: 10, AlarmType: 'SETTLE' },
    ]);
    const one = await instance(db);
    await one.app.alarmRules.close();
    // An evaluator whose passes are seen as they end.
    const passes: { busy: boolean }[] = [];
    const seen: Database = {
      ...db,
      transaction: (fn) =>
        db.transaction(fn).then((result) => {
          passes.push(result as unknown as { busy: boolean });
          return result;
        }),
    };
    const evaluator = new RuleEvaluator(seen, { log: one.app.log });
    await evaluator.settle();
    // Another instance's pass holds the position while an upload commits.
    const locked = signal();
    const release = signal();
    const other = db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM alarm_rule_cursor FOR UPDATE');
      locked.resolve();
      await release.promise;
    });
    let settled = false;
    let settling: Promise<unknown> | undefined;
    try {
      await locked.promise;
      await upload(one, 'logs/sensor', { sensorID: SENSOR, value: 20, timestamp: secondsAgo(10) });
      const before = passes.length;
      settling = evaluator.settle().then(() => (settled = true));
      await until(
        () => passes.slice(before).some((p) => p.busy),
        'a pass finding the position taken',
      );
      // That pass evaluated nothing: settle still waits.
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
    } finally {
      release.resolve();
      await other;
    }
    await settling;
    expect(await alarmsOf(db, 'SETTLE')).toMatchObject([{ occurrences: 1, resolved_at: null }]);
    await evaluator.close();
    await one.app.close();
  });
});
