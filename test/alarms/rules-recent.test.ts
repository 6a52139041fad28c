import { describe, expect, it } from 'vitest';
import { RecentLogs } from '../../src/alarms/rules/recent.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';
import { insertedLogEvents } from '../../src/telemetry/statement-log-events.js';

// The entries of uploads just committed, found by the text of the `logs` events their plain INSERT
// stored: exactly the entries of that event's site, kind and equipment; nothing for any other text.

const entry = (id: number, site: number, ts: number, value: number, index = 0): Entry => ({
  kind: 'sensor',
  id,
  site,
  ts,
  values: [value],
  index,
});

describe('recent uploads for the rule evaluator', () => {
  it("finds an event's entries by the event's text, per equipment, and nothing for other text", () => {
    const t = Date.parse('2026-01-01T00:00:00Z');
    const job = makeJob(
      'log',
      [entry(11, 1, t + 60_000, 5), entry(12, 1, t, 6), entry(11, 1, t, 7), entry(21, 2, t, 8)],
      [1, 2],
    );
    const recent = new RecentLogs();
    recent.add([job]);
    const { data } = insertedLogEvents([job]);
    expect(data).toHaveLength(2);
    const site1 = data.find((d) => JSON.parse(d).siteId === 1)!;
    expect(recent.entriesOf(site1, 11)?.map((e) => e.values[0])).toEqual([5, 7]);
    expect(recent.entriesOf(site1, 12)?.map((e) => e.values[0])).toEqual([6]);
    expect(recent.entriesOf(site1, 21)).toEqual([]);
    const site2 = data.find((d) => JSON.parse(d).siteId === 2)!;
    expect(recent.entriesOf(site2, 21)?.map((e) => e.values[0])).toEqual([8]);
    // The same event as an upsert's statement writes it (built in SQL): read back instead.
    const sqlText = JSON.stringify(JSON.parse(site1), null, 1);
    expect(recent.entriesOf(sqlText, 11)).toBeUndefined();
  });

  it('reads back an event whose text another upload of different entries shares', () => {
    // Sensor 11 at 0 and 12 at 60 s, then 11 at 60 s and 12 at 0: no key in common, the same text.
    const a = makeJob('log', [entry(11, 1, 0, 1), entry(12, 1, 60_000, 2)], [1]);
    const b = makeJob('log', [entry(11, 1, 60_000, 3), entry(12, 1, 0, 4)], [1]);
    const [text] = insertedLogEvents([a]).data;
    expect(insertedLogEvents([b]).data).toEqual([text]);
    const recent = new RecentLogs();
    recent.add([a]);
    expect(recent.entriesOf(text, 11)?.map((e) => e.values[0])).toEqual([1]);
    recent.add([b]);
    expect(recent.entriesOf(text, 11)).toBeUndefined();
    // Once a pass has read past both, a new upload of that text is known again.
    recent.readPast(performance.now() + 1);
    recent.add([a]);
    expect(recent.entriesOf(text, 11)?.map((e) => e.values[0])).toEqual([1]);
  });

  it('keeps the latest uploads up to its bound of entries', () => {
    const recent = new RecentLogs(3);
    const jobs = [0, 1].map((n) =>
      makeJob('log', [entry(11, 1, n * 1000, n), entry(11, 1, n * 1000 + 60_000, n)], [1]),
    );
    recent.add([jobs[0]]);
    recent.add([jobs[1]]);
    const [first, second] = jobs.map((j) => insertedLogEvents([j]).data[0]);
    expect(recent.entriesOf(first, 11)).toBeUndefined();
    expect(recent.entriesOf(second, 11)).toHaveLength(2);
    // The dropped text, uploaded again before a pass read it: read back.
    recent.add([jobs[0]]);
    expect(recent.entriesOf(first, 11)).toBeUndefined();
  });

  it('keeps nothing once too many texts were dropped unread, until a pass has read past them', () => {
    const recent = new RecentLogs(1, 1);
    const jobs = [0, 1, 2].map((n) => makeJob('log', [entry(11, 1, n * 1000, n)], [1]));
    const texts = jobs.map((j) => insertedLogEvents([j]).data[0]);
    recent.add([jobs[0]]);
    recent.add([jobs[1]]);
    recent.add([jobs[2]]);
    expect(texts.map((t) => recent.entriesOf(t, 11))).toEqual([undefined, undefined, undefined]);
    recent.readPast(performance.now() + 1);
    recent.add([jobs[2]]);
    expect(recent.entriesOf(texts[2], 11)).toHaveLength(1);
  });
});
