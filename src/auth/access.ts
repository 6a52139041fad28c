import type { Queryable } from '../db/index.js';
import { EQUIPMENT, equipmentLabel, type EquipmentKind } from '../equipment.js';
import { forbidden, listIds, notFound } from '../errors.js';
import type { Client } from './clients.js';
import { RIGHTS, roleHas, type Right, type Role } from './roles.js';
import type { VerifiedToken } from './tokens.js';

/** What one request's client may reach. Every route's access decision goes through here. */
export class Access {
  private readonly sites: Set<number> | null;
  private readonly cameras: Set<number> | null;

  /** `token`: the request's verified token (a stream ends when it expires or is retired). */
  constructor(
    readonly client: Client,
    readonly token?: VerifiedToken,
  ) {
    this.sites = client.siteIds ? new Set(client.siteIds) : null;
    this.cameras = client.cameraIds ? new Set(client.cameraIds) : null;
  }

  /** Epoch ms at which the request's token expires. */
  get expiresAt(): number | undefined {
    return this.token?.expiresAt;
  }

  get role(): Role {
    return this.client.role;
  }

  /** 403 unless the client's role holds the right (contract 16). */
  assertRight(right: Right): void {
    if (!roleHas(this.client.role, right))
      throw forbidden(
        `the role ${this.client.role} may not do this; it needs the role ${listRoles(RIGHTS[right])}`,
      );
  }

  /** null: every site. */
  get siteIds(): number[] | null {
    return this.client.siteIds;
  }

  canReachSite(siteId: number): boolean {
    return this.sites === null || this.sites.has(siteId);
  }

  canReachCamera(cameraId: number): boolean {
    return this.cameras === null || this.cameras.has(cameraId);
  }

  /** 403 as a whole when any site is out of reach. Unknown sites are out of reach too. */
  assertSites(siteIds: Iterable<number>): void {
    const out = [...new Set(siteIds)].filter((id) => !this.canReachSite(id));
    // Never names the sites: an id the client cannot reach may be another tenant's.
    if (out.length) throw forbidden('no access to one or more of the requested sites');
  }

  assertCameras(cameraIds: Iterable<number>): void {
    const out = [...new Set(cameraIds)].filter((id) => !this.canReachCamera(id));
    if (out.length)
      throw forbidden('no access to one or more of the cameras of the requested sites');
  }

  /** The administration routes: only a client with `admin: true` and the role `full`. */
  assertAdmin(): void {
    if (!this.client.admin) throw forbidden('administration needs a client with admin rights');
    this.assertRight('administer');
  }

  /**
   * Whether a grant of sites and cameras (null: all) lies within this client's own: what an admin
   * may see, touch and hand out, so that no admin can give more than it has.
   */
  covers(grant: { siteIds: number[] | null; cameraIds: number[] | null }): boolean {
    const within = (mine: Set<number> | null, theirs: number[] | null) =>
      mine === null || (theirs !== null && theirs.every((id) => mine.has(id)));
    return within(this.sites, grant.siteIds) && within(this.cameras, grant.cameraIds);
  }
}

const listRoles = (roles: readonly string[]) =>
  roles.length > 1 ? `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}` : roles[0];

/** Maps each id to its site; ids that do not exist are left out. */
export async function findEquipmentSites(
  db: Queryable,
  kind: EquipmentKind,
  ids: number[],
): Promise<Map<number, number>> {
  const { table, idColumn: id } = EQUIPMENT[kind];
  const rows = await db.query<{ id: number; site_id: number }>(
    `SELECT ${id} AS id, site_id FROM ${table} WHERE ${id} = ANY($1::int[])`,
    [[...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.site_id]));
}

/**
 * The 404-before-403 rule: equipment that does not exist is a 404 for every client (so existence
 * answers the same whoever asks); only then is reach checked, as a whole. Returns id -> site.
 */
export async function requireEquipment(
  db: Queryable,
  access: Access,
  kind: EquipmentKind,
  ids: number[],
): Promise<Map<number, number>> {
  const sites = await findEquipmentSites(db, kind, ids);
  const missing = [...new Set(ids)].filter((i) => !sites.has(i));
  if (missing.length) throw notFound(`${equipmentLabel(kind)} ${listIds(missing)} does not exist`);
  access.assertSites(sites.values());
  return sites;
}

/**
 * Site-addressed requests: 403 as a whole when any site is out of reach or does not exist (so a
 * client learns nothing of sites it cannot reach, and every client gets the same answer for an
 * unknown one).
 */
export async function requireSites(
  db: Queryable,
  access: Access,
  siteIds: number[],
): Promise<void> {
  const ids = [...new Set(siteIds)];
  access.assertSites(ids);
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sites WHERE site_id = ANY($1::int[])`,
    [ids],
  );
  if (rows[0].n !== ids.length) throw forbidden('no access to one or more of the requested sites');
}
