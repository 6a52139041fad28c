import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../db/index.js';
import type { Access } from '../auth/access.js';
import {
  CLIENT_ID_PATTERN,
  findClientForUpdate,
  insertClient,
  listClients,
  replaceSecret,
  updateClient,
  type ClientChange,
  type ClientRecord,
} from '../auth/clients.js';
import { hashSecret } from '../auth/secrets.js';
import type { Role } from '../auth/roles.js';
import { badRequest, forbidden, HttpError, notFound } from '../errors.js';

// Managing API clients, for the CLI and the admin routes alike. The actor is the acting client's
// access (an admin, possibly limited to some sites and cameras) or OPERATOR: whoever runs the CLI
// on the service's database, who may do anything. An admin sees and touches only clients whose sites and cameras lie
// within its own, and hands out only sites and cameras it has itself (no escalation).

export const OPERATOR = 'operator';
export type Actor = Access | typeof OPERATOR;
type Ids = number[] | '*';

/** A client as administrators see it: '*' for all, times in UTC; never a secret. */
export interface ClientView {
  clientId: string;
  siteIds: Ids;
  cameraIds: Ids;
  admin: boolean;
  role: Role;
  disabled: boolean;
  createdAt: string;
  updatedAt: string;
}

const viewOf = (c: ClientRecord): ClientView => ({
  clientId: c.clientId,
  siteIds: c.siteIds ?? '*',
  cameraIds: c.cameraIds ?? '*',
  admin: c.admin,
  role: c.role,
  disabled: c.disabled,
  createdAt: new Date(c.createdAt).toISOString(),
  updatedAt: new Date(c.updatedAt).toISOString(),
});

const MIN_SECRET = 8;
const MAX_SECRET = 1000;
/** A random secret of 192 bits. */
const generateSecret = () => randomBytes(24).toString('base64url');

const asNull = (v: Ids | undefined) => (v === '*' ? null : (v ?? null));
const OUT_OF_REACH = 'no access to one or more of the requested sites or cameras';

/** "1, 2, 3, 4, 5 and 7 more": an error names a few ids, never an unbounded list. */
function someIds(ids: (number | string)[], max = 5): string {
  return ids.length <= max
    ? ids.join(', ')
    : `${ids.slice(0, max).join(', ')} and ${ids.length - max} more`;
}

/** Refuses a grant beyond the actor's own (403), then ids that do not exist (400). */
async function checkGrant(
  db: Queryable,
  actor: Actor,
  siteIds: Ids,
  cameraIds: Ids,
): Promise<void> {
  if (
    actor !== OPERATOR &&
    !actor.covers({ siteIds: asNull(siteIds), cameraIds: asNull(cameraIds) })
  )
    throw forbidden(OUT_OF_REACH);
  if (siteIds !== '*' && siteIds.length) {
    const found = await db.query<{ id: number }>(
      `SELECT site_id AS id FROM sites WHERE site_id = ANY($1::int[])`,
      [siteIds],
    );
    const missing = missingOf(siteIds, found);
    if (missing.length)
      throw badRequest(`unknown site${missing.length > 1 ? 's' : ''} ${someIds(missing)}`, [
        { path: '/siteIds', message: 'no such site' },
      ]);
  }
  if (cameraIds !== '*' && cameraIds.length) {
    const found = await db.query<{ id: number; site: number }>(
      `SELECT camera_id AS id, site_id AS site FROM cameras WHERE camera_id = ANY($1::int[])`,
      [cameraIds],
    );
    const missing = missingOf(cameraIds, found);
    if (missing.length)
      throw badRequest(`unknown camera${missing.length > 1 ? 's' : ''} ${someIds(missing)}`, [
        { path: '/cameraIds', message: 'no such camera' },
      ]);
    // A site-limited admin hands out only cameras of its own sites.
    if (actor !== OPERATOR && found.some((c) => !actor.canReachSite(c.site)))
      throw forbidden(OUT_OF_REACH);
  }
}

const missingOf = (ids: number[], found: { id: number }[]) => {
  const have = new Set(found.map((r) => r.id));
  return [...new Set(ids)].filter((id) => !have.has(id));
};

function checkIdentity(clientId: string, clientSecret: string | undefined): void {
  if (!new RegExp(CLIENT_ID_PATTERN).test(clientId))
    throw badRequest('a client id is 1 to 200 letters, digits or . _ : @ -', [
      { path: '/clientId', message: 'invalid client id' },
    ]);
  if (
    clientSecret !== undefined &&
    (clientSecret.length < MIN_SECRET || clientSecret.length > MAX_SECRET)
  )
    throw badRequest(`a client secret is ${MIN_SECRET} to ${MAX_SECRET} characters`, [
      { path: '/clientSecret', message: 'invalid length' },
    ]);
}

export interface NewClientRequest {
  clientId: string;
  /** Absent: one is generated and returned (the only time it is shown). */
  clientSecret?: string;
  siteIds: Ids;
  cameraIds?: Ids;
  admin?: boolean;
  /** Absent: `full`. */
  role?: Role;
}

/** Creates a client; an existing id is a 409 and changes nothing. */
export async function createClient(
  db: Database,
  actor: Actor,
  req: NewClientRequest,
): Promise<{ client: ClientView; generatedSecret?: string }> {
  checkIdentity(req.clientId, req.clientSecret);
  const cameraIds = req.cameraIds ?? [];
  await checkGrant(db, actor, req.siteIds, cameraIds);
  const secret = req.clientSecret ?? generateSecret();
  const created = await insertClient(db, {
    clientId: req.clientId,
    clientSecret: secret,
    siteIds: req.siteIds,
    cameraIds,
    admin: req.admin,
    role: req.role,
  });
  if (!created)
    throw new HttpError(
      409,
      `client ${req.clientId} already exists (update it, or rotate its secret, instead)`,
    );
  return {
    client: viewOf(created),
    generatedSecret: req.clientSecret === undefined ? secret : undefined,
  };
}

/** The client, locked for this transaction, when the actor may touch it: 404 when absent, 403 when beyond the actor. */
async function reachableClient(
  tx: Queryable,
  actor: Actor,
  clientId: string,
): Promise<ClientRecord> {
  const client = await findClientForUpdate(tx, clientId);
  if (!client) throw notFound(`no client ${clientId}`);
  if (actor !== OPERATOR && !actor.covers(client))
    throw forbidden('no access to this client: it reaches sites or cameras beyond yours');
  return client;
}

export type ClientChanges = Partial<Record<keyof ClientChange, { from: unknown; to: unknown }>>;

/** Changes a client's sites, cameras, admin right, role or disabled flag; returns it and what changed (for the log). */
export async function changeClient(
  db: Database,
  actor: Actor,
  clientId: string,
  change: ClientChange,
): Promise<{ client: ClientView; changes: ClientChanges }> {
  const fields = (['siteIds', 'cameraIds', 'admin', 'role', 'disabled'] as const).filter(
    (k) => change[k] !== undefined,
  );
  if (!fields.length)
    throw badRequest('nothing to change: give siteIds, cameraIds, admin, role or disabled');
  // Administration needs admin: true and the role full: an admin giving up either would lock itself out.
  if (
    actor !== OPERATOR &&
    actor.client.clientId === clientId &&
    (change.disabled === true ||
      change.admin === false ||
      (change.role !== undefined && change.role !== 'full'))
  )
    throw forbidden(
      'an admin cannot disable itself or give up its own admin right or role full; another admin or the CLI can',
    );
  return db.transaction(async (tx) => {
    const before = viewOf(await reachableClient(tx, actor, clientId));
    if (change.siteIds !== undefined || change.cameraIds !== undefined)
      await checkGrant(
        tx,
        actor,
        change.siteIds ?? before.siteIds,
        change.cameraIds ?? before.cameraIds,
      );
    const after = viewOf((await updateClient(tx, clientId, change))!);
    const changes: ClientChanges = {};
    for (const k of fields)
      if (JSON.stringify(before[k]) !== JSON.stringify(after[k]))
        changes[k] = { from: before[k], to: after[k] };
    return { client: after, changes };
  });
}

/** A new random secret (returned once); the old secret and every token issued before now stop working. */
export async function rotateSecret(db: Database, actor: Actor, clientId: string): Promise<string> {
  const secret = generateSecret();
  const hash = await hashSecret(secret);
  await db.transaction(async (tx) => {
    await reachableClient(tx, actor, clientId);
    await replaceSecret(tx, clientId, hash);
  });
  return secret;
}

/** The clients the actor may see, by id, a page at a time. */
export async function listVisibleClients(
  db: Queryable,
  actor: Actor,
  page: { limit: number; offset: number },
) {
  const within =
    actor === OPERATOR
      ? { siteIds: null, cameraIds: null }
      : { siteIds: actor.siteIds, cameraIds: actor.client.cameraIds };
  const { clients, total } = await listClients(db, within, page);
  return { clients: clients.map(viewOf), total };
}
