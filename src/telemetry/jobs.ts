import type { Entry } from './kinds.js';

// A job is one request's upload after validation and the access check: it can no longer fail for
// anything of its own, so the writer may store it in one transaction with other requests' jobs.

export type Role = 'log' | 'reading';

export interface Counts {
  received: number;
  stored: number;
  duplicates: number;
}

export interface Job {
  role: Role;
  /** Entries to write: at most one per key (logs: equipment and timestamp; readings: equipment). */
  entries: Entry[];
  /** Their keys, parallel to entries. */
  keys: string[];
  /** Entries in the request. */
  received: number;
  /** Sites whose LastCommunication the upload sets. */
  sites: number[];
  /** Newest log timestamp (epoch ms), for the partition check. */
  maxTs: number;
}

/**
 * Duplicates inside one request: for logs the last entry of a key wins; for readings the newest
 * (on a tie, the last). The entries it supersedes count as duplicates.
 */
export function makeJob(role: Role, entries: Entry[], sites: number[]): Job {
  const winners = new Map<string, Entry>();
  let maxTs = 0;
  for (const e of entries) {
    if (e.ts > maxTs) maxTs = e.ts;
    const key = role === 'log' ? `${e.kind}:${e.id}:${e.ts}` : `r:${e.kind}:${e.id}`;
    const held = winners.get(key);
    if (role === 'log' || !held || e.ts >= held.ts) {
      if (held) winners.delete(key); // re-insert, so the surviving order is the entries' order
      winners.set(key, e);
    }
  }
  return { role, entries: [...winners.values()], keys: [...winners.keys()], received: entries.length, sites, maxTs };
}
