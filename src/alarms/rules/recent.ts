import type { Job } from '../../telemetry/jobs.js';
import type { Entry } from '../../telemetry/kinds.js';
import { jobLogGroups } from '../../telemetry/statement-log-events.js';

// The log entries of this instance's latest committed uploads, by the `logs` event each stored: the
// evaluator (samples.ts) takes an event's samples from here instead of reading them back from its
// log table. Only events a plain INSERT stored are here (their data is made in JavaScript,
// statement-log-events.ts, so the same text names them; such an INSERT stores every entry of the
// event or fails): an event found here holds exactly these entries. Anything else (an upsert's
// events, another instance's, one evicted, one after a restart) is read from the log table as before.

/** Entries kept at most (the oldest uploads go first): a few seconds of the fastest ingest. */
const MAX_ENTRIES = 300_000;
/** Texts of uploads dropped before a pass read them, remembered at most. */
const MAX_DROPPED = 100_000;

// Two committed events may have the same text (site, kind, equipment, first and last time, count)
// and different entries: such a text is kept without entries (read back). So is one whose earlier
// namesake was dropped unread (too many entries kept), which `dropped` remembers until a pass has read
// past it; should that list overflow, nothing is kept until a pass has read past the overflow.

interface Held {
  /** When it was added (performance.now()): after its commit. */
  at: number;
  size: number;
  /** By equipment id; undefined: its text is not enough to know (read back). */
  entries: Map<number, Entry[]> | undefined;
}

export class RecentLogs {
  private readonly byEvent = new Map<string, Held>();
  private readonly dropped = new Map<string, number>();
  private size = 0;
  /** Set when `dropped` overflowed: nothing is kept until a pass has read past this time. */
  private unsureSince: number | undefined;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxDropped = MAX_DROPPED,
  ) {}

  /** Jobs just committed. */
  add(jobs: Job[], now = performance.now()): void {
    if (this.unsureSince !== undefined) return;
    for (const job of jobs) {
      if (job.role !== 'log') continue;
      for (const { group, data } of jobLogGroups(job, true)) {
        const held = this.byEvent.get(data);
        const twice = held !== undefined || this.dropped.has(data);
        if (held) this.remove(data, held);
        this.byEvent.set(data, {
          at: now,
          size: group.count,
          entries: twice ? undefined : group.entries,
        });
        this.size += group.count;
      }
    }
    for (const [data, held] of this.byEvent) {
      if (this.size <= this.maxEntries) break;
      this.remove(data, held);
      this.dropped.set(data, held.at);
    }
    if (this.dropped.size > this.maxDropped) {
      this.byEvent.clear();
      this.dropped.clear();
      this.size = 0;
      this.unsureSince = now;
    }
  }

  /**
   * A pass has read every event committed before `t` (performance.now() before it began, and it
   * read to the end): what was added before then is done with.
   */
  readPast(t: number): void {
    for (const [data, held] of this.byEvent) {
      if (held.at >= t) break;
      this.remove(data, held);
    }
    for (const [data, at] of this.dropped) {
      if (at >= t) break;
      this.dropped.delete(data);
    }
    if (this.unsureSince !== undefined && this.unsureSince < t) this.unsureSince = undefined;
  }

  /** The entries of one equipment that the `logs` event with this text stored (undefined: not known here). */
  entriesOf(data: string, id: number): Entry[] | undefined {
    const entries = this.byEvent.get(data)?.entries;
    return entries ? (entries.get(id) ?? []) : undefined;
  }

  private remove(data: string, held: Held) {
    this.byEvent.delete(data);
    this.size -= held.size;
  }
}
