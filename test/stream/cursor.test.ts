import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advance,
  covers,
  decode,
  encode,
  sees,
  union,
  type Cursor,
} from '../../src/stream/cursor.js';

// The stream's positions, against a model of PostgreSQL: transactions get ids when they begin,
// write events (ids from one sequence, interleaved between transactions), and commit or roll back
// in any order. Two instances follow the events in pages; a client streams from one, drops off at
// any point, resumes with the id of the last event it got on either instance (replay, then live),
// and so on. Whatever happens, the client gets every committed event after its first snapshot
// exactly once, the events of a transaction in order, and no event of a rolled-back one.

interface Tx {
  xid: number;
  events: number[];
  state: 'open' | 'committed' | 'aborted';
}
interface Ev {
  xid: number;
  eid: number;
}

type Op =
  | { op: 'begin' }
  | { op: 'insert'; tx: number; n: number }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'poll'; f: number; limit: number; pages: number }
  | { op: 'drop' }
  | { op: 'resume'; f: number; limit: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Op>({ op: 'begin' }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('insert' as const),
      tx: fc.nat(5),
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('end' as const), tx: fc.nat(5), commit: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('poll' as const),
      f: fc.nat(1),
      limit: fc.integer({ min: 1, max: 4 }),
      pages: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant<Op>({ op: 'drop' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('resume' as const),
      f: fc.nat(1),
      limit: fc.integer({ min: 1, max: 4 }),
    }),
  },
);

function simulate(ops: Op[]) {
  const txs: Tx[] = [];
  let nextXid = 100;
  let nextEid = 1;
  const snapshot = (): Cursor => ({
    xmax: nextXid,
    xip: txs.filter((t) => t.state === 'open').map((t) => t.xid),
    partials: [],
  });
  /** Committed events `from` has not seen, `upTo` has (if given), in stream order, at most limit. */
  const unseen = (from: Cursor, limit: number, upTo?: Cursor): Ev[] =>
    txs
      .filter((t) => t.state === 'committed')
      .flatMap((t) => t.events.map((eid) => ({ xid: t.xid, eid })))
      .filter((e) => !sees(from, e.xid, e.eid) && (!upTo || sees(upTo, e.xid, e.eid)))
      .sort((a, b) => a.xid - b.xid || a.eid - b.eid)
      .slice(0, limit);

  const start = snapshot();
  const followers: (Cursor | undefined)[] = [start, undefined];
  const client = {
    on: 0 as number | undefined,
    base: start as Cursor | undefined,
    lastId: encode(start),
    got: [] as Ev[],
  };
  const take = (e: Ev, id: string) => {
    // Every id the client keeps must read back as the same position.
    expect(encode(decode(id)!)).toBe(id);
    client.got.push(e);
    client.lastId = id;
  };

  /** A follower reads up to `pages` pages (a read still going on when a client resumes there leaves it mid-way). */
  const poll = (f: number, limit: number, pages = Infinity) => {
    for (let page = 0; page < pages; page++) {
      const from = followers[f]!;
      const to = snapshot();
      const batch = unseen(from, limit);
      const complete = batch.length < limit;
      followers[f] = advance(from, to, batch, complete, (e, after) => {
        if (client.on !== f) return;
        let id = encode(after);
        if (client.base) {
          if (sees(client.base, e.xid, e.eid)) return;
          if (covers(after, client.base)) client.base = undefined;
          else id = encode(union(client.base, after));
        }
        take(e, id);
      });
      if (complete) return;
    }
  };

  const resume = (f: number, limit: number) => {
    const from = decode(client.lastId)!;
    if (!followers[f]) followers[f] = snapshot();
    // As the service: catch up when the client has seen more than this instance has handed on.
    if (!covers(followers[f]!, from)) poll(f, limit);
    const upTo = followers[f]!;
    expect(covers(upTo, from)).toBe(true);
    let cur = from;
    for (;;) {
      const page = unseen(cur, limit, upTo);
      const complete = page.length < limit;
      cur = advance(cur, upTo, page, complete, (e, after) => take(e, encode(after)));
      if (complete) break;
    }
    client.on = f;
    client.base = undefined;
  };

  for (const o of ops) {
    const open = txs.filter((t) => t.state === 'open');
    if (o.op === 'begin') txs.push({ xid: nextXid++, events: [], state: 'open' });
    else if (o.op === 'insert' && open.length)
      for (let i = 0; i < o.n; i++) open[o.tx % open.length].events.push(nextEid++);
    else if (o.op === 'end' && open.length)
      open[o.tx % open.length].state = o.commit ? 'committed' : 'aborted';
    else if (o.op === 'poll' && followers[o.f]) poll(o.f, o.limit, o.pages);
    else if (o.op === 'drop') client.on = undefined;
    else if (o.op === 'resume' && client.on === undefined) resume(o.f, o.limit);
  }
  for (const t of txs) if (t.state === 'open') t.state = 'committed';
  if (client.on === undefined) resume(0, 3);
  poll(client.on!, 3);

  const expected = txs
    .filter((t) => t.state === 'committed')
    .flatMap((t) => t.events.map((eid) => ({ xid: t.xid, eid })))
    .filter((e) => !sees(start, e.xid, e.eid));
  return { got: client.got, expected };
}

function check(ops: Op[]) {
  const { got, expected } = simulate(ops);
  const key = (e: Ev) => `${e.xid}:${e.eid}`;
  expect(got.map(key).sort()).toEqual(expected.map(key).sort());
  expect(new Set(got.map(key)).size).toBe(got.length);
  for (let i = 1; i < got.length; i++)
    if (got[i].xid === got[i - 1].xid) expect(got[i].eid).toBeGreaterThan(got[i - 1].eid);
}

describe('stream positions (cursor)', () => {
  it('a client that drops and resumes anywhere gets every committed event exactly once, in order per transaction', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 150, size: 'large' }), check),
      { numRuns: 3000 },
    );
  });

  it('an event committed late by a transaction that began early is replayed after a reconnect', () => {
    // y begins, x begins after it and commits first; the client gets x's event and drops; y commits.
    check([
      { op: 'begin' },
      { op: 'poll', f: 0, limit: 4, pages: 1 },
      { op: 'begin' },
      { op: 'insert', tx: 1, n: 1 },
      { op: 'end', tx: 1, commit: true },
      { op: 'poll', f: 0, limit: 4, pages: 1 },
      { op: 'drop' },
      { op: 'insert', tx: 0, n: 2 },
      { op: 'end', tx: 0, commit: true },
      { op: 'resume', f: 1, limit: 1 },
    ]);
  });

  it('reads back only ids it wrote', () => {
    const c: Cursor = { xmax: 5000, xip: [4000, 4990], partials: [{ xid: 4990, eid: 77 }] };
    expect(encode(c)).toBe('3uw.334.3um~3um.25');
    expect(decode(encode(c))).toEqual(c);
    for (const bad of [
      undefined,
      '',
      'x!',
      '3uw.3um.334',
      '3uw~334.1',
      '3uw.334~3um.1',
      'ABC',
      '1'.repeat(9000),
      '3uw..334',
    ])
      expect(decode(bad)).toBeUndefined();
  });

  it('union sees what either sees; covers is true only when nothing seen is missing', () => {
    const a: Cursor = { xmax: 10, xip: [3, 7], partials: [{ xid: 7, eid: 40 }] };
    const b: Cursor = { xmax: 8, xip: [5], partials: [] };
    const u = union(a, b);
    for (let x = 0; x < 12; x++)
      for (const eid of [10, 40, 50])
        expect(sees(u, x, eid)).toBe(sees(a, x, eid) || sees(b, x, eid));
    expect(covers(u, a) && covers(u, b)).toBe(true);
    expect(covers(b, a)).toBe(false);
    expect(covers(a, b)).toBe(false); // b saw 3 and 7
  });
});
