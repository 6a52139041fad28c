import type { Queryable } from '../db/index.js';
import { advance, covers, type Cursor } from './cursor.js';
import { readEvents, toEvent } from './events.js';
import type { Subscriber } from './subscriber.js';

// After a reconnect: what the client missed, from the cursor of its Last-Event-ID up to where this
// instance's follower stood when the client was registered (later events come live), page by page,
// each page read when little of the last one is left to send.

const PAGE = 1000;

/**
 * Sends the events `from` has not seen and `upTo` has, of the subscriber's sites. Returns false,
 * before sending anything, when some of them are no longer retained (the client needs a snapshot);
 * ends the stream when that happens later on (the client reconnects and gets one).
 */
export async function replay(
  db: Queryable,
  sub: Subscriber,
  from: Cursor,
  upTo: Cursor,
): Promise<boolean> {
  let cur = from;
  for (let first = true; !sub.closed; first = false) {
    const page = await readEvents(db, cur, PAGE, sub.sites, upTo);
    // Events the position has not seen may have been pruned.
    if (page.pruned && !covers(cur, page.pruned)) {
      if (first) return false;
      sub.close('the rest of the replay is no longer retained');
      return true;
    }
    const complete = page.rows.length < PAGE;
    cur = advance(cur, upTo, page.rows, complete, (row, after) => {
      const e = toEvent(row, after);
      sub.send(e.id, e.type, e.data, { key: e.key, ts: e.ts });
    });
    if (complete) break;
    await sub.drained();
  }
  return true;
}
