import type { Database } from '../db/index.js';
import type { Access } from '../auth/access.js';
import { badRequest } from '../errors.js';
import { ImportError, importDocument, type ImportSummary } from '../provisioning/import.js';
import { authorizeDocument } from './import-access.js';

// A provisioning document sent by an admin: checked against the admin's sites (import-access.ts)
// inside the import's transaction; a bad document is a 400 naming its first bad record.

/** `registers[5].SiteModbusInOutDeviceID` -> `/registers/5/SiteModbusInOutDeviceID` */
const pointerOf = (path: string) =>
  path.startsWith('(')
    ? '/'
    : `/${path
        .replace(/\[(\d+)\]/g, '.$1')
        .split('.')
        .filter(Boolean)
        .join('/')}`;

/**
 * Imports a document for an admin: 403 beyond its sites, 400 naming the first bad record; nothing
 * changes on error. Returns the counts and the ids of the clients it wrote (their cached records are stale).
 */
export async function importAsAdmin(
  db: Database,
  actor: Access,
  doc: unknown,
): Promise<{ summary: ImportSummary; clientIds: string[] }> {
  let clientIds: string[] = [];
  try {
    const summary = await importDocument(db, doc, {
      authorize: async (tx, checked) => {
        await authorizeDocument(tx, checked, actor);
        clientIds = (checked.clients ?? []).map((c) => c.clientId);
      },
    });
    return { summary, clientIds };
  } catch (err) {
    if (err instanceof ImportError)
      throw badRequest(`import failed, nothing was changed: ${err.message}`, [
        { path: pointerOf(err.path), message: err.reason },
      ]);
    throw err;
  }
}
