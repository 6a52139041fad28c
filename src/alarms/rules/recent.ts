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
/** Uploads kept at most this long: the evaluator runs within a second of each commit. */
const MAX_AGE_MS = 30_000;

export class RecentLogs {
  private readonly byEvent = new Map<
    string,
    { at: number; size: number; entries: Map<number, Entry[]> }
  >();
  private size = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxAgeMs = MAX_AGE_MS,
  ) {}

  /** Jobs just committed. */
  add(jobs: Job[], now = performance.now()): void {
    for (const job of jobs) {
      if (job.role !== 'log') continue;
      for (const { group, data } of jobLogGroups(job, true)) {
        const held = this.byEvent.get(data);
        if (held) this.drop(data, held.size);
        this.byEvent.set(data, { at: now, size: group.count, entries: group.entries! });
        this.size += group.count;
      }
    }
    for (const [data, e] of this.byEvent) {
      if (this.size <= this.maxEntries && now - e.at <= this.maxAgeMs) break;
      this.drop(data, e.size);
    }
  }

  /** The entries of one equipment that the `logs` event with this data stored (undefined: not known here). */
  entriesOf(data: string, id: number): Entry[] | undefined {
    const e = this.byEvent.get(data);
    return e ? (e.entries.get(id) ?? []) : undefined;
  }

  private drop(data: string, size: number) {
    this.byEvent.delete(data);
    this.size -= size;
  }
}
