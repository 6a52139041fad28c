import { requireSites, type Access } from '../auth/access.js';
import type { Database, Queryable } from '../db/index.js';
import { badRequest, listIds, notFound } from '../errors.js';
import type { AlarmRecord, SiteBatch } from './record.js';
import { findSiteAlarmIds, listActive, markResolved, withDeadlockRetry } from './store.js';

// Resolving alarms and listing the open ones (interface 3 and 4.8, contract 8).

export interface ResolveInput {
  SiteAlarmLogID: string | number;
  note?: string | null;
}

export interface ResolveResult {
  SiteAlarmLogID: string;
  status: 'resolved' | 'already_resolved';
  /** Present when this request resolved it: the record as it stood when resolved. */
  alarm?: AlarmRecord;
}

const MAX_INT8 = 9_223_372_036_854_775_807n;
const MAX_DETAILS = 20;

/** A SiteAlarmLogID as its canonical text, or undefined when it cannot be one (the ids are positive 64-bit integers). */
export function canonicalAlarmId(id: string | number): string | undefined {
  if (typeof id === 'number' && !Number.isSafeInteger(id)) return undefined; // precision already lost in JSON
  const n = BigInt(id);
  return n >= 1n && n <= MAX_INT8 ? n.toString() : undefined;
}

/**
 * Resolves the alarms of one site, all or nothing: the site must be reachable (403), every id must be
 * an alarm of that site (404, nothing resolved). An alarm listed twice is resolved by its first
 * entry (with that entry's note) and already_resolved for the next. Results in request order.
 */
export async function resolveAlarms(
  db: Database,
  access: Access,
  { siteId, items, pathOf }: SiteBatch<ResolveInput>,
): Promise<ResolveResult[]> {
  const ids = alarmIdsOf(items, pathOf);
  await requireSites(db, access, [siteId]);
  const firstNote = firstNotes(items, ids);
  const resolved = await withDeadlockRetry(() =>
    db.transaction(async (tx) => {
      await requireKnown(tx, siteId, ids, pathOf);
      return markResolved(
        tx,
        siteId,
        [...firstNote].map(([id, note]) => ({ id, note })),
        access.client.clientId,
      );
    }),
  );
  const byId = new Map(resolved.map((r) => [r.SiteAlarmLogID, r]));
  return ids.map((id) => {
    const alarm = byId.get(id);
    byId.delete(id); // a later entry of the same id finds it resolved already
    return alarm
      ? { SiteAlarmLogID: id, status: 'resolved', alarm }
      : { SiteAlarmLogID: id, status: 'already_resolved' };
  });
}

/** The canonical ids of a batch's entries, in order; 400 naming the first that cannot be an alarm id. */
export function alarmIdsOf(
  items: { SiteAlarmLogID: string | number }[],
  pathOf: (i: number) => string,
): string[] {
  return items.map((item, i) => {
    const id = canonicalAlarmId(item.SiteAlarmLogID);
    if (id === undefined) {
      const path = `${pathOf(i)}/SiteAlarmLogID`;
      throw badRequest(
        `validation failed: ${path} must be a positive 64-bit integer (send ids above 2^53 as strings)`,
        [{ path, message: `${path} must be a positive 64-bit integer` }],
      );
    }
    return id;
  });
}

/** Each distinct id with the note of its first entry (an alarm listed twice is changed by its first). */
export function firstNotes(
  items: { note?: string | null }[],
  ids: string[],
): Map<string, string | null> {
  const firstNote = new Map<string, string | null>();
  items.forEach((item, i) => {
    if (!firstNote.has(ids[i])) firstNote.set(ids[i], item.note ?? null);
  });
  return firstNote;
}

/** 404 naming every id that is not an alarm of the site (an alarm of another site, another tenant's included). */
export async function requireKnown(
  db: Queryable,
  siteId: number,
  ids: string[],
  pathOf: (i: number) => string,
): Promise<void> {
  const known = await findSiteAlarmIds(db, siteId, [...new Set(ids)]);
  const unknown = ids.map((id, index) => ({ id, index })).filter((x) => !known.has(x.id));
  if (!unknown.length) return;
  const distinct = [...new Set(unknown.map((u) => u.id))];
  const message = `alarm${distinct.length > 1 ? 's' : ''} ${listIds(distinct)} ${distinct.length > 1 ? 'do' : 'does'} not exist at site ${siteId}`;
  throw notFound(
    message,
    unknown.slice(0, MAX_DETAILS).map((u) => ({
      path: `${pathOf(u.index)}/SiteAlarmLogID`,
      message: `alarm ${u.id} does not exist at site ${siteId}`,
    })),
  );
}

/** The unresolved alarms of the sites (403 when any is out of reach or unknown), newest first, at most `limit`, of the given severities if any. */
export async function listActiveAlarms(
  db: Queryable,
  access: Access,
  siteIds: number[],
  limit: number,
  severities?: readonly string[],
): Promise<AlarmRecord[]> {
  await requireSites(db, access, siteIds);
  return listActive(db, [...new Set(siteIds)], limit, severities ?? null);
}
