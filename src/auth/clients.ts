import type { Queryable } from '../db/index.js';
import { hashSecret } from './secrets.js';
import { DEFAULT_ROLE, type Role } from './roles.js';

/** An API credential as the service uses it. */
export interface Client {
  clientId: string;
  /** null: every site. */
  siteIds: number[] | null;
  /** null: every camera. */
  cameraIds: number[] | null;
  admin: boolean;
  /** What it may do (contract 16); `full` unless set. */
  role: Role;
  disabled: boolean;
  /**
   * When the client's secret was last rotated or the client last disabled (epoch microseconds, null:
   * never): the tokens issued before are refused. A token carries the value its client had when it
   * was issued (see tokens.ts), so this is compared exactly, whatever the clocks.
   */
  tokensNotBefore?: number | null;
}

/** A client as an administrator sees it (never its secret or hash). */
export interface ClientRecord extends Client {
  createdAt: Date;
  updatedAt: Date;
}

export interface NewClient {
  clientId: string;
  clientSecret: string;
  siteIds: number[] | '*';
  cameraIds?: number[] | '*';
  admin?: boolean;
  /** Absent: `full`. */
  role?: Role;
}

/** What a client id may look like (it travels in URLs and logs). */
export const CLIENT_ID_PATTERN = '^[A-Za-z0-9._:@-]{1,200}$';

const COLUMNS = `client_id AS "clientId", site_ids AS "siteIds", camera_ids AS "cameraIds", admin, role, disabled,
  round(extract(epoch FROM tokens_not_before) * 1000000)::float8 AS "tokensNotBefore"`;
/**
 * Retires every token issued so far: a later time than any before (two changes within one clock tick
 * still differ), so a token issued under the previous value never equals the new one.
 */
const RETIRE_TOKENS = `greatest(clock_timestamp(), tokens_not_before + interval '1 microsecond')`;
const RECORD_COLUMNS = `${COLUMNS}, created_at AS "createdAt", updated_at AS "updatedAt"`;
const listOrStar = (v: number[] | '*' | undefined, absent: number[] | null) =>
  v === undefined ? absent : v === '*' ? null : v;

export async function findClient(
  db: Queryable,
  clientId: string,
): Promise<(Client & { secretHash: string }) | undefined> {
  // No stored id holds NUL (PostgreSQL text cannot) or is that long: such an id, from a token or a body, is simply unknown.
  if (clientId.length > 1000 || clientId.includes('\u0000')) return undefined;
  const rows = await db.query<Client & { secretHash: string }>(
    `SELECT ${COLUMNS}, secret_hash AS "secretHash" FROM clients WHERE client_id = $1`,
    [clientId],
  );
  return rows[0];
}

/** One client, locked until the transaction ends (read-check-write without a race). */
export async function findClientForUpdate(
  db: Queryable,
  clientId: string,
): Promise<ClientRecord | undefined> {
  const [row] = await db.query<ClientRecord>(
    `SELECT ${RECORD_COLUMNS} FROM clients WHERE client_id = $1 FOR UPDATE`,
    [clientId],
  );
  return row;
}

/**
 * Clients whose sites and cameras all lie within the given ones (null: no bound), by id, a page
 * at a time; with the total.
 */
export async function listClients(
  db: Queryable,
  within: { siteIds: number[] | null; cameraIds: number[] | null } = {
    siteIds: null,
    cameraIds: null,
  },
  page: { limit: number; offset: number } = { limit: 10_000, offset: 0 },
): Promise<{ clients: ClientRecord[]; total: number }> {
  const where = `($1::int[] IS NULL OR (site_ids IS NOT NULL AND site_ids <@ $1::int[]))
    AND ($2::int[] IS NULL OR (camera_ids IS NOT NULL AND camera_ids <@ $2::int[]))`;
  const [clients, [count]] = await Promise.all([
    db.query<ClientRecord>(
      `SELECT ${RECORD_COLUMNS} FROM clients WHERE ${where} ORDER BY client_id LIMIT $3 OFFSET $4`,
      [within.siteIds, within.cameraIds, page.limit, page.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM clients WHERE ${where}`, [
      within.siteIds,
      within.cameraIds,
    ]),
  ]);
  return { clients, total: count.n };
}

/** Creates or replaces a client (secret re-hashed, re-enabled): what a provisioning document means. */
export async function upsertClient(db: Queryable, c: NewClient): Promise<void> {
  const secretHash = await hashSecret(c.clientSecret);
  await db.query(
    `INSERT INTO clients (client_id, secret_hash, site_ids, camera_ids, admin, role, disabled)
     VALUES ($1, $2, $3, $4, $5, $6, false)
     ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, site_ids = EXCLUDED.site_ids,
       camera_ids = EXCLUDED.camera_ids, admin = EXCLUDED.admin, role = EXCLUDED.role, disabled = false,
       updated_at = now()`,
    [
      c.clientId,
      secretHash,
      listOrStar(c.siteIds, null),
      listOrStar(c.cameraIds, []),
      c.admin ?? false,
      c.role ?? DEFAULT_ROLE,
    ],
  );
}

/** Creates a client; undefined when the id is taken (nothing changed). */
export async function insertClient(db: Queryable, c: NewClient): Promise<ClientRecord | undefined> {
  const secretHash = await hashSecret(c.clientSecret);
  const [row] = await db.query<ClientRecord>(
    `INSERT INTO clients (client_id, secret_hash, site_ids, camera_ids, admin, role, disabled)
     VALUES ($1, $2, $3, $4, $5, $6, false)
     ON CONFLICT (client_id) DO NOTHING RETURNING ${RECORD_COLUMNS}`,
    [
      c.clientId,
      secretHash,
      listOrStar(c.siteIds, null),
      listOrStar(c.cameraIds, []),
      c.admin ?? false,
      c.role ?? DEFAULT_ROLE,
    ],
  );
  return row;
}

export interface ClientChange {
  siteIds?: number[] | '*';
  cameraIds?: number[] | '*';
  admin?: boolean;
  role?: Role;
  disabled?: boolean;
}

/**
 * Sets the given fields (absent ones stay); undefined when there is no such client. Disabling retires
 * the client's tokens: enabled again, it needs new ones.
 */
export async function updateClient(
  db: Queryable,
  clientId: string,
  change: ClientChange,
): Promise<ClientRecord | undefined> {
  const [row] = await db.query<ClientRecord>(
    `UPDATE clients SET
       site_ids = CASE WHEN $2 THEN $3::int[] ELSE site_ids END,
       camera_ids = CASE WHEN $4 THEN $5::int[] ELSE camera_ids END,
       admin = coalesce($6, admin), disabled = coalesce($7, disabled), role = coalesce($8, role),
       updated_at = now(),
       tokens_not_before = CASE WHEN $7 THEN ${RETIRE_TOKENS} ELSE tokens_not_before END
     WHERE client_id = $1 RETURNING ${RECORD_COLUMNS}`,
    [
      clientId,
      change.siteIds !== undefined,
      listOrStar(change.siteIds, null),
      change.cameraIds !== undefined,
      listOrStar(change.cameraIds, null),
      change.admin ?? null,
      change.disabled ?? null,
      change.role ?? null,
    ],
  );
  return row;
}

/** A new secret (its hash): the old one stops working, and so do the tokens issued before now. */
export async function replaceSecret(
  db: Queryable,
  clientId: string,
  secretHash: string,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE clients SET secret_hash = $2, tokens_not_before = ${RETIRE_TOKENS}, updated_at = now()
     WHERE client_id = $1 RETURNING 1`,
    [clientId, secretHash],
  );
  return rows.length > 0;
}
