// A position in the stream, as PostgreSQL itself tells what is committed: a snapshot. Events are
// grouped by their writing transaction (xid); a cursor has seen every transaction below xmax except
// those in xip (running when it was taken), and of a few transactions (partials, always also in xip)
// the events up to an id. Positions taken from snapshots never skip a transaction that commits late,
// whatever the order of commits, and nothing has to wait for a long transaction to end: it simply
// stays in xip until its events arrive. The SSE `id` of every event is the cursor after it.

export interface Partial {
  xid: number;
  eid: number;
}

export interface Cursor {
  xmax: number;
  /** Ascending, each below xmax. */
  xip: number[];
  /** Ascending by xid, each xid also in xip. */
  partials: Partial[];
}

/** One event's place in the stream. */
export interface Position {
  xid: number;
  eid: number;
}

const has = (list: number[], x: number) => list.includes(x);
const partialOf = (c: Cursor, xid: number) => c.partials.find((p) => p.xid === xid);

/** Whether the cursor has seen every event of transaction xid. */
export function seesAll(c: Cursor, xid: number): boolean {
  return xid < c.xmax && !has(c.xip, xid);
}

export function sees(c: Cursor, xid: number, eid: number): boolean {
  if (seesAll(c, xid)) return true;
  const p = partialOf(c, xid);
  return p !== undefined && eid <= p.eid;
}

/** pg_current_snapshot() as text: "xmin:xmax:xip,xip". */
export function fromSnapshot(text: string): Cursor {
  const [, xmax, xip] = text.split(':');
  return {
    xmax: safe(xmax),
    xip: xip
      ? xip
          .split(',')
          .map(safe)
          .sort((a, b) => a - b)
      : [],
    partials: [],
  };
}

function safe(s: string): number {
  const n = Number(s);
  // 2^53 transactions would take 28,000 years at 10,000 a second.
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`transaction id out of range: ${s}`);
  return n;
}

/** "xmax.xip.xip~xid.eid~xid.eid", numbers in base 36: short enough for a Last-Event-ID header. */
export function encode(c: Cursor): string {
  let s = c.xmax.toString(36);
  for (const x of c.xip) s += `.${x.toString(36)}`;
  for (const p of c.partials) s += `~${p.xid.toString(36)}.${p.eid.toString(36)}`;
  return s;
}

const FORMAT = /^[0-9a-z]{1,13}(\.[0-9a-z]{1,13})*(~[0-9a-z]{1,13}\.[0-9a-z]{1,13})*$/;

/** The cursor of an id this service sent, or undefined for anything else. */
export function decode(id: string | undefined): Cursor | undefined {
  if (!id || id.length > 8192 || !FORMAT.test(id)) return undefined;
  const [head, ...parts] = id.split('~');
  const nums = head.split('.').map((s) => parseInt(s, 36));
  const partials = parts.map((p) => {
    const [x, e] = p.split('.').map((s) => parseInt(s, 36));
    return { xid: x, eid: e };
  });
  const c: Cursor = { xmax: nums[0], xip: nums.slice(1), partials };
  const ascending = (xs: number[]) =>
    xs.every((x, i) => Number.isSafeInteger(x) && (i === 0 || x > xs[i - 1]));
  if (!ascending([...c.xip, c.xmax]) || !ascending(partials.map((p) => p.xid))) return undefined;
  if (!partials.every((p) => Number.isSafeInteger(p.eid) && has(c.xip, p.xid))) return undefined;
  return c;
}

/** What either has seen. */
export function union(a: Cursor, b: Cursor): Cursor {
  const xmax = Math.max(a.xmax, b.xmax);
  const xip = [...new Set([...a.xip, ...b.xip])]
    .filter((x) => !seesAll(a, x) && !seesAll(b, x))
    .sort((x, y) => x - y);
  const partials: Partial[] = [];
  for (const x of xip) {
    const eid = Math.max(partialOf(a, x)?.eid ?? -1, partialOf(b, x)?.eid ?? -1);
    if (eid >= 0) partials.push({ xid: x, eid });
  }
  return { xmax, xip, partials };
}

/** Whether `c` has seen everything `base` has (conservative: may say no when it has). */
export function covers(c: Cursor, base: Cursor): boolean {
  if (c.xmax < base.xmax) return false;
  for (const x of c.xip) if (x < base.xmax && !has(base.xip, x)) return false;
  for (const p of base.partials) if (!sees(c, p.xid, p.eid)) return false;
  return true;
}

/**
 * Walks a cursor over a batch: `events` are, in (xid, eid) order, the events that `from` has not seen
 * and `to` has (all of them when `complete`, else the first ones). Calls each(event, cursor after it)
 * and returns the cursor after the batch (`to` itself when complete; `from` must have seen no more than `to`).
 */
export function advance<E extends Position>(
  from: Cursor,
  to: Cursor,
  events: E[],
  complete: boolean,
  each: (e: E, after: Cursor) => void,
): Cursor {
  let cur = from;
  for (let j = 0; j < events.length; j++) {
    const { xid: x, eid } = events[j];
    const next = events[j + 1];
    // Every event of x is in hand when x had ended for `to` and the batch holds no more of it.
    const done = !has(to.xip, x) && (next ? next.xid !== x : complete);
    // Below x, what is still unseen is what was running for `to` (earlier events of the batch are
    // sent; the other transactions ended without events, or rolled back). Above x nothing changes.
    const xip: number[] = [];
    for (const y of cur.xip) if (y > x || (y < x && has(to.xip, y))) xip.push(y);
    if (x >= cur.xmax) for (const y of to.xip) if (y >= cur.xmax && y < x) xip.push(y);
    if (!done) xip.push(x);
    xip.sort((a, b) => a - b);
    const partials = cur.partials.filter((p) => p.xid !== x && has(xip, p.xid));
    if (!done) partials.push({ xid: x, eid });
    partials.sort((a, b) => a.xid - b.xid);
    cur = { xmax: Math.max(cur.xmax, x + 1), xip, partials };
    each(events[j], cur);
  }
  return complete ? to : cur;
}
