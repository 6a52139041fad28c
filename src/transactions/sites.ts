import type { Queryable } from '../db/index.js';
import type { Access } from '../auth/access.js';
import { forbidden } from '../errors.js';

/** The same words whichever site failed, so a 403 tells nothing about another tenant's sites. */
const NO_SITE_ACCESS = 'no access to one or more of the requested sites';

/**
 * 403 as a whole when any requested site is out of reach or does not exist (a site that does not
 * exist answers as one out of reach, for every client).
 */
export async function requireSites(
  db: Queryable,
  access: Access,
  siteIds: number[],
): Promise<number[]> {
  const ids = [...new Set(siteIds)];
  if (!ids.every((id) => access.canReachSite(id))) throw forbidden(NO_SITE_ACCESS);
  const rows = await db.query<{ site_id: number }>(
    `SELECT site_id FROM sites WHERE site_id = ANY($1::int[])`,
    [ids],
  );
  if (rows.length !== ids.length) throw forbidden(NO_SITE_ACCESS);
  return ids;
}

/** With motionCap: every camera of every requested site must be the client's, else 403. */
export async function requireSiteCameras(
  db: Queryable,
  access: Access,
  siteIds: number[],
): Promise<void> {
  const rows = await db.query<{ camera_id: number }>(
    `SELECT camera_id FROM cameras WHERE site_id = ANY($1::int[])`,
    [siteIds],
  );
  if (!rows.every((r) => access.canReachCamera(r.camera_id)))
    throw forbidden(
      'no access to one or more cameras of the requested sites (motionCap needs every camera of every site)',
    );
}
