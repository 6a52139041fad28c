import type { Queryable } from '../db/index.js';
import { toRecord, type RecordRow } from '../alarms/record.js';
import { EQUIPMENT, type TelemetryKind } from '../equipment.js';
import { decode, encode, fromSnapshot, type Cursor } from './cursor.js';
import { tail } from './frames.js';

// Reading stream_events in stream order, and an event as the subscribers take it.

export type EventType = 'reading' | 'logs' | 'alarm' | 'config' | 'edge';

export interface StreamEvent {
  xid: number;
  eid: number;
  siteId: number;
  type: EventType;
  /** The SSE data: the event's JSON. */
  data: string;
  /** Readings: the equipment (kind:id), whose queued reading a newer one may replace, and the reading's time. */
  key?: string;
  ts?: number;
  /** The cursor after this event; `id` is its SSE form. */
  after: Cursor;
  id: string;
  /** The event's text after its id line, the same for every subscriber. */
  tail: string;
}

interface Row {
  snap: string;
  pruned: string;
  xid: string | null;
  eid: string;
  site_id: number;
  type: EventType;
  data: string;
}

export interface Page {
  /** The snapshot the page was read in (what was committed then). */
  snapshot: Cursor;
  /** What has been pruned: events this position has seen may be gone (undefined: nothing yet). */
  pruned: Cursor | undefined;
  rows: { xid: number; eid: number; siteId: number; type: EventType; data: string }[];
}

/**
 * Events `from` has not seen, in (xid, id) order, at most `limit`; only the given sites (null: all)
 * and, with `upTo`, only those it has seen. One statement, so the snapshot returned is the one read.
 */
export async function readEvents(
  db: Queryable,
  from: Cursor,
  limit: number,
  sites: number[] | null = null,
  upTo?: Cursor,
): Promise<Page> {
  const params: unknown[] = [
    from.xip.map(String),
    String(from.xmax),
    from.partials.map((p) => String(p.xid)),
    from.partials.map((p) => p.eid),
    limit,
  ];
  const seenBy = (c: Cursor) => {
    params.push(
      String(c.xmax),
      c.xip.map(String),
      c.partials.map((p) => String(p.xid)),
      c.partials.map((p) => p.eid),
    );
    const n = params.length;
    return `((u.xid < $${n - 3}::xid8 AND u.xid <> ALL($${n - 2}::xid8[])) OR ${partialSees(`$${n - 1}`, `$${n}`)})`;
  };
  const filters = [`NOT ${partialSees('$3', '$4')}`];
  if (sites) filters.push(`u.site_id = ANY($${params.push(sites)}::int[])`);
  if (upTo) filters.push(seenBy(upTo));
  // Each range is ordered and limited on its own: the primary key serves both, whatever the planner
  // believes of the table (it grows fast, and its statistics lag; PGlite never gathers any), and
  // indexOrder keeps the planner from reading the whole range to sort it.
  const range = (cond: string) =>
    `(SELECT * FROM stream_events u WHERE ${cond} AND ${filters.join(' AND ')} ORDER BY u.xid, u.id LIMIT $5)`;
  const rows = await db.query<Row>(
    `SELECT s.snap, s.pruned, e.xid, e.eid, e.site_id, e.type, e.data
       FROM (SELECT pg_current_snapshot()::text AS snap, (SELECT pruned FROM stream_state) AS pruned) s
       LEFT JOIN LATERAL (
         SELECT u.xid::text AS xid, u.id::text AS eid, u.site_id, u.type, u.data
           FROM (${range('u.xid = ANY($1::xid8[])')} UNION ALL ${range('u.xid >= $2::xid8')}) u
          ORDER BY u.xid, u.id
          LIMIT $5) e ON true`,
    params,
    { indexOrder: true },
  );
  return {
    snapshot: fromSnapshot(rows[0].snap),
    pruned: decode(rows[0].pruned),
    rows: rows
      .filter((r) => r.xid !== null)
      .map((r) => ({
        xid: Number(r.xid),
        eid: Number(r.eid),
        siteId: r.site_id,
        type: r.type,
        data: r.data,
      })),
  };
}

/** Whether the partials ($x: xid8[], $e: int8[]) have seen row u. */
const partialSees = (x: string, e: string) =>
  `EXISTS (SELECT 1 FROM unnest(${x}::xid8[], ${e}::int8[]) AS p(x, e) WHERE p.x = u.xid AND u.id <= p.e)`;

/** An event as sent, at its place in the stream. */
export function toEvent(row: Page['rows'][number], after: Cursor): StreamEvent {
  const e: StreamEvent = { ...row, after, id: encode(after), tail: '' };
  if (row.type === 'reading') {
    const { kind, record } = JSON.parse(row.data) as {
      kind: TelemetryKind;
      record: Record<string, unknown>;
    };
    e.key = `${kind}:${record[EQUIPMENT[kind].idField]}`;
    e.ts = Date.parse(record.timestamp as string);
  } else if (row.type === 'alarm') {
    // Stored as the statement returned it; sent as the active-alarm list shows it.
    const { status, alarm } = JSON.parse(row.data) as {
      status: string;
      alarm: Record<string, unknown>;
    };
    const record = toRecord(alarm as unknown as RecordRow);
    e.data = JSON.stringify({ siteId: row.siteId, status, alarm: record });
  }
  e.tail = tail(e.type, e.data);
  return e;
}
