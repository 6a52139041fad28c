import type { Queryable } from '../db/index.js';
import { hashSecret } from './secrets.js';

/** An API credential as the service uses it. */
export interface Client {
  clientId: string;
  /** null: every site. */
  siteIds: number[] | null;
  /** null: every camera. */
  cameraIds: number[] | null;
  admin: boolean;
  disabled: boolean;
}

export interface NewClient {
  clientId: string;
  clientSecret: string;
  siteIds: number[] | '*';
  cameraIds?: number[] | '*';
  admin?: boolean;
}

const COLUMNS = `client_id AS "clientId", site_ids AS "siteIds", camera_ids AS "cameraIds", admin, disabled`;

export async function findClient(db: Queryable, clientId: string): Promise<(Client & { secretHash: string }) | undefined> {
  const rows = await db.query<Client & { secretHash: string }>(
    `SELECT ${COLUMNS}, secret_hash AS "secretHash" FROM clients WHERE client_id = $1`,
    [clientId],
  );
  return rows[0];
}

export async function listClients(db: Queryable): Promise<Client[]> {
  return db.query<Client>(`SELECT ${COLUMNS} FROM clients ORDER BY client_id`);
}

/** Creates or replaces a client (secret re-hashed, re-enabled). */
export async function upsertClient(db: Queryable, c: NewClient): Promise<void> {
  const secretHash = await hashSecret(c.clientSecret);
  await db.query(
    `INSERT INTO clients (client_id, secret_hash, site_ids, camera_ids, admin, disabled)
     VALUES ($1, $2, $3, $4, $5, false)
     ON CONFLICT (client_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, site_ids = EXCLUDED.site_ids,
       camera_ids = EXCLUDED.camera_ids, admin = EXCLUDED.admin, disabled = false, updated_at = now()`,
    [c.clientId, secretHash, c.siteIds === '*' ? null : c.siteIds, c.cameraIds === '*' ? null : (c.cameraIds ?? []), c.admin ?? false],
  );
}

/** Returns false when there is no such client. */
export async function disableClient(db: Queryable, clientId: string): Promise<boolean> {
  const rows = await db.query(`UPDATE clients SET disabled = true, updated_at = now() WHERE client_id = $1 RETURNING 1`, [clientId]);
  return rows.length > 0;
}
