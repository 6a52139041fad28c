import type { Job } from '../../telemetry/jobs.js';
import type { Entry } from '../../telemetry/kinds.js';
import { jobLogGroups } from '../../telemetry/statement-log-events.js';

// The log entries of this instance's latest committed uploads, by the transaction that stored them
// (its id: the xid of its stream events) and the text of each `logs` event it stored: the evaluator
// (samples.ts) takes an event's samples from here instead of reading them back from its log table.
// Only events a plain INSERT stored are found here (their data is made in JavaScript,
// statement-log-events.ts, so the same text names them; such an INSERT stores every entry of the
// event or fails): an event found here holds exactly these entries. Anything else (an upsert's
// events, another instance's, one evicted, one after a restart) is read from the log table as before.
//
// The transaction is part of the key: two uploads may store events of the same text (site, kind,
// equipment, first and last time, count) and different entries, on this instance or on another one
// of the same database; only the event of the very transaction that stored these entries is theirs.
// Within one transaction (a group of uploads) a text that two of its events share is kept without
// entries (read back).

/** Entries kept at most (the oldest transactions go first): a few seconds of the fastest ingest. */
const MAX_ENTRIES = 300_000;

interface Held {
  /** When it was added (performance.now()): after its commit. */
  at: number;
  size: number;
  /** By event text, then equipment id; undefined: the text is not enough to know (read back). */
  events: Map<string, Map<number, Entry[]> | undefined>;
}

export class RecentLogs {
  /** By transaction id, in the order added. */
  private readonly byXact = new Map<number, Held>();
  private size = 0;

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /** Jobs just committed by transaction `xid` (pg_current_xact_id() of it, as text). */
  add(jobs: Job[], xid: string, now = performance.now()): void {
    // As the stream's reader turns an event's xid into a number (stream/events.ts).
    const key = Number(xid);
    let held = this.byXact.get(key);
    if (!held) this.byXact.set(key, (held = { at: now, size: 0, events: new Map() }));
    for (const job of jobs) {
      if (job.role !== 'log') continue;
      for (const { group, data } of jobLogGroups(job, true)) {
        held.events.set(data, held.events.has(data) ? undefined : group.entries);
        held.size += group.count;
        this.size += group.count;
      }
    }
    for (const [x, h] of this.byXact) {
      if (this.size <= this.maxEntries) break;
      this.remove(x, h);
    }
  }

  /**
   * A pass has read every event committed before `t` (performance.now() before it began, and it
   * read to the end): what was added before then is done with.
   */
  readPast(t: number): void {
    for (const [x, held] of this.byXact) {
      if (held.at >= t) break;
      this.remove(x, held);
    }
  }

  /**
   * The entries of one equipment that the `logs` event of transaction `xid` with this text stored
   * (undefined: not known here).
   */
  entriesOf(xid: number, data: string, id: number): Entry[] | undefined {
    const entries = this.byXact.get(xid)?.events.get(data);
    return entries ? (entries.get(id) ?? []) : undefined;
  }

  private remove(xid: number, held: Held) {
    this.byXact.delete(xid);
    this.size -= held.size;
  }
}
