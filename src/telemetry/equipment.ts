import { findEquipmentSites, type Access } from '../auth/access.js';
import { equipmentLabel } from '../equipment.js';
import type { Database } from '../db/index.js';
import { listIds, notFound, type ErrorDetail } from '../errors.js';
import { equipmentKey, KINDS, type Entry, type TelemetryKind } from './kinds.js';

// Which site each piece of equipment belongs to, for the access check of every upload. Gateways
// send the same few ids all day, so the answer is kept for `ttlMs`: equipment is only changed by
// imports, and an import that moves equipment to another site takes effect here within ttlMs.
// Only ids found in the database are kept: an unknown id is looked up again on every request, so
// equipment imported a moment ago is found at once and a missing id is never taken for existing.

const MAX_CACHED = 200_000;

export class EquipmentDirectory {
  private readonly cache = new Map<number, { site: number; at: number }>();

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
  ) {}

  /**
   * The 404-before-403 rule for a whole request, every kind at once: 404 when any id does not exist
   * (so the answer is the same for every client), else 403 when any site is out of reach.
   * Returns the sites the entries belong to. `pathOf` names an entry's id field in error details.
   * A lookup not answered by `deadline` (epoch ms) fails with DatabaseTimeout.
   */
  async resolve(
    access: Access,
    entries: Entry[],
    pathOf: (e: Entry) => string,
    deadline: number,
  ): Promise<number[]> {
    const now = Date.now();
    const siteOf = new Map<number, number>();
    const wanted = new Map<TelemetryKind, Set<number>>();
    for (const e of entries) {
      const key = equipmentKey(e.kind, e.id);
      if (siteOf.has(key)) continue;
      const hit = this.cache.get(key);
      if (hit && now - hit.at < this.ttlMs) siteOf.set(key, hit.site);
      else {
        let ids = wanted.get(e.kind);
        if (!ids) wanted.set(e.kind, (ids = new Set()));
        ids.add(e.id);
      }
    }
    if (wanted.size) {
      const db = this.db.bounded(Math.max(1, deadline - now));
      const found = await Promise.all(
        [...wanted].map(
          async ([kind, ids]) => [kind, await findEquipmentSites(db, kind, [...ids])] as const,
        ),
      );
      if (this.cache.size > MAX_CACHED) this.cache.clear();
      for (const [kind, sites] of found)
        for (const [id, site] of sites) {
          siteOf.set(equipmentKey(kind, id), site);
          if (this.ttlMs > 0) this.cache.set(equipmentKey(kind, id), { site, at: now });
        }
    }
    const missing = entries.filter(
      (e) => (e.site = siteOf.get(equipmentKey(e.kind, e.id))) === undefined,
    );
    if (missing.length) throw unknownEquipment(missing, pathOf);
    const sites = [...new Set(siteOf.values())];
    access.assertSites(sites);
    return sites;
  }
}

function unknownEquipment(missing: Entry[], pathOf: (e: Entry) => string) {
  const byKind = new Map<TelemetryKind, Set<number>>();
  for (const e of missing) {
    if (!byKind.has(e.kind)) byKind.set(e.kind, new Set());
    byKind.get(e.kind)!.add(e.id);
  }
  const message = [...byKind]
    .map(([kind, ids]) => `${equipmentLabel(kind)} ${listIds([...ids])}`)
    .join('; ');
  const details: ErrorDetail[] = missing.slice(0, 20).map((e) => ({
    path: pathOf(e),
    message: `${equipmentLabel(e.kind)} ${e.id} does not exist`,
  }));
  const plural = missing.length > 1 && new Set(missing.map((e) => `${e.kind}:${e.id}`)).size > 1;
  return notFound(`${message} ${plural ? 'do' : 'does'} not exist`, details);
}

export const idPath = (prefix: string, single: boolean) => (e: Entry) =>
  single ? `/${KINDS[e.kind].idField}` : `${prefix}/${e.index}/${KINDS[e.kind].idField}`;
