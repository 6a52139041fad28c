import { describe, expect, it } from 'vitest';
import { RecentLogs } from '../../src/alarms/rules/recent.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';
import { insertedLogEvents } from '../../src/telemetry/statement-log-events.js';

// The entries of uploads just committed, found by the transaction that stored them and the text of
// the `logs` events their plain INSERT stored: exactly the entries of that event's site, kind and
// equipment; nothing for any other text or transaction.

const entry = (id: number, site: number, ts: number, value: number, index = 0): Entry => ({
  kind: 'sensor',
  id,
  site,
  ts,
  values: [value],
  index,
});

describe('recent uploads for the rule evaluator', () => {
  it("finds an event's entries by its transaction and text, per equipment, and nothing for other text", () => {
    const t = Date.parse('2026-01-01T00:00:00Z');
    const job = makeJob(
      'log',
      [entry(11, 1, t + 60_000, 5), entry(12, 1, t, 6), entry(11, 1, t, 7), entry(21, 2, t, 8)],
      [1, 2],
    );
    const recent = new RecentLogs();
    recent.add([job], '700');
    const { data } = insertedLogEvents([job]);
    expect(data).toHaveLength(2);
    const site1 = data.find((d) => JSON.parse(d).siteId === 1)!;
    expect(recent.entriesOf(700, site1, 11)?.map((e) => e.values[0])).toEqual([5, 7]);
    expect(recent.entriesOf(700, site1, 12)?.map((e) => e.values[0])).toEqual([6]);
    expect(recent.entriesOf(700, site1, 21)).toEqual([]);
    const site2 = data.find((d) => JSON.parse(d).siteId === 2)!;
    expect(recent.entriesOf(700, site2, 21)?.map((e) => e.values[0])).toEqual([8]);
    // The same event as an upsert's statement writes it (built in SQL): read back instead.
    const sqlText = JSON.stringify(JSON.parse(site1), null, 1);
    expect(recent.entriesOf(700, sqlText, 11)).toBeUndefined();
    // The same text stored by another transaction (another upload, here or on another instance).
    expect(recent.entriesOf(701, site1, 11)).toBeUndefined();
  });

  it('tells apart uploads of different entries whose events share a text, by their transaction', () => {
    // Sensor 11 at 0 and 12 at 60 s, then 11 at 60 s and 12 at 0: no key in common, the same text.
    const a = makeJob('log', [entry(11, 1, 0, 1), entry(12, 1, 60_000, 2)], [1]);
    const b = makeJob('log', [entry(11, 1, 60_000, 3), entry(12, 1, 0, 4)], [1]);
    const [text] = insertedLogEvents([a]).data;
    expect(insertedLogEvents([b]).data).toEqual([text]);
    const recent = new RecentLogs();
    recent.add([a], '800');
    recent.add([b], '801');
    expect(recent.entriesOf(800, text, 11)?.map((e) => e.values[0])).toEqual([1]);
    expect(recent.entriesOf(801, text, 11)?.map((e) => e.values[0])).toEqual([3]);
    // Both in one transaction (a group): its text is not enough, read back.
    recent.add([a, b], '802');
    expect(recent.entriesOf(802, text, 11)).toBeUndefined();
    // Once a pass has read past them, they are let go.
    recent.readPast(performance.now() + 1);
    expect(recent.entriesOf(800, text, 11)).toBeUndefined();
    expect(recent.entriesOf(801, text, 11)).toBeUndefined();
  });

  it('keeps the latest uploads up to its bound of entries', () => {
    const recent = new RecentLogs(3);
    const jobs = [0, 1].map((n) =>
      makeJob('log', [entry(11, 1, n * 1000, n), entry(11, 1, n * 1000 + 60_000, n)], [1]),
    );
    recent.add([jobs[0]], '900');
    recent.add([jobs[1]], '901');
    const [first, second] = jobs.map((j) => insertedLogEvents([j]).data[0]);
    expect(recent.entriesOf(900, first, 11)).toBeUndefined();
    expect(recent.entriesOf(901, second, 11)).toHaveLength(2);
    // The dropped text, uploaded again by another transaction: that one's entries.
    recent.add([jobs[0]], '902');
    expect(recent.entriesOf(902, first, 11)).toHaveLength(2);
    expect(recent.entriesOf(900, first, 11)).toBeUndefined();
  });
});
