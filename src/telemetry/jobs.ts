import { equipmentKey, type Entry, type TelemetryKind } from './kinds.js';

// A job is one request's upload after validation and the access check: it can no longer fail for
// anything of its own, so the writer may store it in one transaction with other requests' jobs.

export type Role = 'log' | 'reading';

/** How the records arrived: the upload routes, or (later) a gateway's MQTT messages. */
export type Source = 'http' | 'mqtt';

export interface Counts {
  received: number;
  stored: number;
  duplicates: number;
}

/** Records a job stored, per kind (kinds it stored nothing of are absent). */
export type StoredByKind = Partial<Record<TelemetryKind, number>>;

export interface Job {
  role: Role;
  /** Entries to write: at most one per key (logs: equipment and timestamp; readings: equipment). */
  entries: Entry[];
  /** Entries in the request. */
  received: number;
  /** Sites whose LastCommunication the upload sets. */
  sites: number[];
  /** Newest log timestamp (epoch ms), for the partition check. */
  maxTs: number;
  source: Source;
}

const keyOfEntry = (e: Entry) => equipmentKey(e.kind, e.id);

/**
 * Duplicates inside one request: for logs the last entry of a key wins; for readings the newest
 * (on a tie, the last). The entries it supersedes count as duplicates.
 */
export function makeJob(
  role: Role,
  entries: Entry[],
  sites: number[],
  source: Source = 'http',
): Job {
  if (role === 'log') {
    const distinct = distinctLogKeys(entries);
    if (distinct !== undefined)
      return { role, entries, received: entries.length, sites, maxTs: distinct, source };
  }
  // Number keys in nested maps: a 1,000-record batch builds no key strings.
  const winners = new Map<number, Map<number, Entry> | Entry>();
  let maxTs = 0;
  let superseded = 0;
  for (const e of entries) {
    if (e.ts > maxTs) maxTs = e.ts;
    const key = keyOfEntry(e);
    if (role === 'reading') {
      const held = winners.get(key) as Entry | undefined;
      if (held) superseded++;
      if (!held || e.ts >= held.ts) winners.set(key, e);
      continue;
    }
    let times = winners.get(key) as Map<number, Entry> | undefined;
    if (!times) winners.set(key, (times = new Map()));
    if (times.has(e.ts)) superseded++;
    times.set(e.ts, e);
  }
  const kept = !superseded
    ? entries
    : role === 'reading'
      ? entries.filter((e) => winners.get(keyOfEntry(e)) === e)
      : entries.filter((e) => (winners.get(keyOfEntry(e)) as Map<number, Entry>).get(e.ts) === e);
  return { role, entries: kept, received: entries.length, sites, maxTs, source };
}

/**
 * The newest timestamp of log entries whose keys (equipment and timestamp) are all distinct, the
 * rule; undefined when some key repeats. Each equipment's times sorted as numbers and compared with
 * their neighbours: several times cheaper than a map entry per record.
 */
function distinctLogKeys(entries: Entry[]): number | undefined {
  const times = new Map<number, number[]>();
  let maxTs = 0;
  for (const e of entries) {
    if (e.ts > maxTs) maxTs = e.ts;
    const key = keyOfEntry(e);
    const list = times.get(key);
    if (list) list.push(e.ts);
    else times.set(key, [e.ts]);
  }
  for (const list of times.values()) {
    if (list.length < 2) continue;
    const sorted = Float64Array.from(list).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return undefined;
  }
  return maxTs;
}

/**
 * The keys a job writes that no other job of the same statement may write, as the writer compares
 * them between jobs (only when it groups several): a log row's equipment and time. Readings have
 * none: one statement takes any number of readings of one equipment in order (statement.ts).
 */
export function keysOf(job: Job): string[] {
  return job.role === 'log' ? job.entries.map((e) => `${e.kind}:${e.id}:${e.ts}`) : [];
}
