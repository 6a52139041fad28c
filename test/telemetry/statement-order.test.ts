import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import { makeEntry, type Entry } from '../../src/telemetry/kinds.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { buildStatement, keyOrder } from '../../src/telemetry/statement.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// An upload's plain INSERT takes its rows in the order the service sends them (no sort in the
// database): one equipment after another, each in time order, whatever the order of the request.

/** What a stable sort by (id, ts) gives: the order keyOrder must find. */
const sortedOrder = (entries: Entry[]) =>
  entries
    .map((_, i) => i)
    .sort((a, b) => entries[a].id - entries[b].id || entries[a].ts - entries[b].ts);

it('keyOrder is the order by id, then time, for entries in any order', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 40 })), {
        maxLength: 80,
      }),
      (pairs) => {
        const entries = pairs.map(([id, minute], i) =>
          makeEntry('sensor', id, minute * 60_000, [i], undefined, i),
        );
        expect(keyOrder(entries)).toEqual(sortedOrder(entries));
      },
    ),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
  );
});

describeEachBackend('the rows of an upload statement', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(() => db.close());

  it('are inserted in key order, each with its own value, when the request is ordered by time', async () => {
    const month = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);
    await new Partitions(db).cover(month + 86_400_000);
    // Minute after minute, three sensors each minute (as a gateway sends them), ids not in order,
    // and one sensor's minutes out of order.
    const entries: Entry[] = [];
    for (let m = 0; m < 20; m++)
      for (const id of [7, 3, 5]) {
        const minute = id === 5 ? 19 - m : m;
        entries.push(
          makeEntry(
            'sensor',
            id,
            month + minute * 60_000,
            [id * 1000 + minute],
            undefined,
            entries.length,
          ),
        );
      }
    for (const e of entries) e.site = 1;
    const { sql, params } = buildStatement(
      [[makeJob('log', entries, [1])]].flat(),
      undefined,
      'insert',
      db.kind === 'postgres',
    );
    expect(sql).not.toMatch(/ORDER BY id, ts/);
    await db.query(sql, params);
    // The heap takes the rows of a plain INSERT in the order the statement hands them over.
    const partition = `sensor_logs_p${new Date(month).toISOString().slice(0, 7).replace('-', '_')}`;
    const rows = await db.query<{ id: number; minute: number; value: number }>(
      `SELECT sensor_id AS id, (extract(epoch FROM ts) * 1000 - $1) / 60000 AS minute, value
         FROM ${partition} ORDER BY ctid`,
      [month],
    );
    const expected = [3, 5, 7].flatMap((id) =>
      Array.from({ length: 20 }, (_, minute) => ({ id, minute, value: id * 1000 + minute })),
    );
    expect(rows.map((r) => ({ id: r.id, minute: Number(r.minute), value: r.value }))).toEqual(
      expected,
    );
  });
});
