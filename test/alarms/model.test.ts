import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { alarmClient, PUMP, SENSOR, type AlarmClient } from './fixtures.js';

// Property: for any sequence of sends (three keys, timestamps in any order) and resolves, the
// service behaves like a simple model of the lifecycle: one open alarm per key, created/duplicate
// and resolved/already_resolved as the model says, every send counted, LastSeen the latest time,
// Message that of the latest send (by timestamp, ties to the later send).

type Op =
  { kind: 'send'; key: number; minute: number } | { kind: 'resolve'; key: number; stale: boolean };

const KEYS = [{ sitePumpID: PUMP }, { sensorID: SENSOR }, {}]; // a pump, a sensor and a site alarm
const BASE = Date.UTC(2026, 0, 1);
const at = (minute: number) => new Date(BASE + minute * 60_000).toISOString();

interface Open {
  id: string;
  occurrences: number;
  first: number;
  last: number;
  message: string;
}

const ops = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('send' as const),
        key: fc.integer({ min: 0, max: 2 }),
        minute: fc.integer({ min: 0, max: 8 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('resolve' as const),
        key: fc.integer({ min: 0, max: 2 }),
        stale: fc.boolean(),
      }),
    },
  ),
  { minLength: 1, maxLength: 25 },
);

describeEachBackend('alarm lifecycle against a model', (backend) => {
  let ctx: TestContext;
  let api: AlarmClient;
  let run = 0;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 } });
    api = alarmClient(ctx, await ctx.token('*'));
  });
  afterAll(async () => ctx?.close());

  it('holds for random sequences of sends and resolves', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (sequence: Op[]) => {
        const alarmType = `Model${++run}`; // each run its own keys
        const open = new Map<number, Open>();
        const resolved: string[] = [];
        let n = 0;
        for (const op of sequence) {
          if (op.kind === 'send') {
            const message = `send ${++n}`;
            const res = await api.send({
              siteId: 1,
              ...KEYS[op.key],
              alarmType,
              message,
              timestamp: at(op.minute),
            });
            expect(res.status).toBe(201);
            const cur = open.get(op.key);
            const t = op.minute;
            if (cur) {
              expect(res.body).toEqual({ SiteAlarmLogID: cur.id, status: 'duplicate' });
              cur.occurrences++;
              cur.first = Math.min(cur.first, t);
              if (t >= cur.last) Object.assign(cur, { last: t, message });
            } else {
              expect(res.body.status).toBe('created');
              expect(resolved).not.toContain(res.body.SiteAlarmLogID);
              open.set(op.key, {
                id: res.body.SiteAlarmLogID,
                occurrences: 1,
                first: t,
                last: t,
                message,
              });
            }
          } else {
            const cur = open.get(op.key);
            const id = op.stale || !cur ? resolved.at(-1) : cur.id;
            if (id === undefined) continue;
            const res = await api.resolve(1, [{ SiteAlarmLogID: id }]);
            expect(res).toEqual({
              status: 200,
              body: [
                { SiteAlarmLogID: id, status: cur?.id === id ? 'resolved' : 'already_resolved' },
              ],
            });
            if (cur?.id === id) {
              open.delete(op.key);
              resolved.push(id);
            }
          }
        }
        const [total] = await ctx.db.query<{ n: number }>(
          `SELECT coalesce(sum(occurrences), 0)::int AS n FROM site_alarms WHERE alarm_type = $1`,
          [alarmType],
        );
        expect(total.n).toBe(n);
        const active = ((await api.active([1])).body as any[]).filter(
          (a) => a.AlarmType === alarmType,
        );
        const expected = [...open.values()].map((o) => ({
          SiteAlarmLogID: o.id,
          Occurrences: o.occurrences,
          FirstSeen: at(o.first),
          LastSeen: at(o.last),
          Message: o.message,
        }));
        const byId = (a: { SiteAlarmLogID: string }, b: { SiteAlarmLogID: string }) =>
          Number(a.SiteAlarmLogID) - Number(b.SiteAlarmLogID);
        expect(
          active
            .map(({ SiteAlarmLogID, Occurrences, FirstSeen, LastSeen, Message }) => ({
              SiteAlarmLogID,
              Occurrences,
              FirstSeen,
              LastSeen,
              Message,
            }))
            .sort(byId),
        ).toEqual(expected.sort(byId));
      }),
      { numRuns: 25 },
    );
  });
});
