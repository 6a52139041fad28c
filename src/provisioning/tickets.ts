import type { Queryable } from '../db/index.js';
import { ImportError } from './checks.js';
import type { ProvisioningDocument } from './document.js';
import { cols, upsertRows } from './upsert.js';
import { dropUnusedBlobs, storeBlobs } from '../images/store.js';

type Doc = ProvisioningDocument;

/** Ticket images name their transaction, motion images their camera; bytes must be base64. */
export function checkImages(doc: Doc): void {
  doc.images?.forEach((m, i) => {
    if (m.Kind === 'ticket' && m.TransactionID == null)
      throw new ImportError(`images[${i}].TransactionID`, 'a ticket image names its transaction');
    if (m.Kind === 'motion' && m.CameraID == null)
      throw new ImportError(`images[${i}].CameraID`, 'a motion image names its camera');
    const clean = m.DataBase64.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean) || clean.length % 4 !== 0)
      throw new ImportError(`images[${i}].DataBase64`, 'not base64');
  });
  doc.transactions?.forEach((t, i) =>
    t.Changes?.forEach((c, j) => {
      if (c.TransactionID !== undefined && c.TransactionID !== t.TransactionID)
        throw new ImportError(
          `transactions[${i}].Changes[${j}].TransactionID`,
          `must be ${t.TransactionID}, the transaction it is listed under`,
        );
    }),
  );
}

/** Change-log records, keyed by transaction, time, log type and editor: importing twice stores once. */
export async function upsertChanges(
  db: Queryable,
  transactions: NonNullable<Doc['transactions']>,
): Promise<number> {
  const rows = transactions.flatMap((t) =>
    (t.Changes ?? []).map((c) => ({
      transaction_id: t.TransactionID,
      site_id: t.SiteID,
      ticket_number: c.TicketNumber ?? t.TicketNumber,
      log_type: c.LogType,
      log_type_name: c.LogTypeName,
      editor: c.Editor,
      editor_company: c.EditorCompany,
      change_date: c.ChangeDate,
      change_items: c.ChangeItems,
    })),
  );
  const columns = cols(
    ['transaction_id', 'int'],
    ['site_id', 'int'],
    ['ticket_number', 'bigint'],
    ['log_type', 'int'],
    ['log_type_name', 'text'],
    ['editor', 'text'],
    ['editor_company', 'text'],
    ['change_date', 'time'],
    ['change_items', 'json'],
  );
  return upsertRows(
    db,
    {
      table: 'transaction_changes',
      key: ['transaction_id', 'change_date', 'log_type', 'editor'],
      columns,
      stamp: false,
    },
    rows,
    new Date(),
  );
}

/**
 * Image records point at their bytes by digest; the bytes are stored once however many images or
 * imports carry them (src/images/store.ts). Bytes an image no longer points at are dropped when no
 * other image does.
 */
export async function upsertImages(
  db: Queryable,
  images: NonNullable<Doc['images']>,
  stamp: Date,
): Promise<number> {
  if (!images.length) return 0;
  const digests = await storeBlobs(
    db,
    images.map((m) => m.DataBase64.replace(/\s+/g, '')),
  );
  const uuids = images.map((m) => m.UUID.toLowerCase());
  const before = await db.query<{ sha256: string }>(
    `SELECT encode(sha256, 'hex') AS sha256 FROM images WHERE uuid = ANY($1::uuid[])`,
    [uuids],
  );
  const rows = images.map((m, i) => ({
    uuid: uuids[i],
    kind: m.Kind,
    site_id: m.SiteID,
    transaction_id: m.TransactionID ?? null,
    camera_id: m.CameraID ?? null,
    captured_at: m.CapturedAt ?? null,
    content_type: m.ContentType,
    sha256: Buffer.from(digests[i], 'hex').toString('base64'),
  }));
  const columns = cols(
    ['uuid', 'uuid'],
    ['kind', 'text'],
    ['site_id', 'int'],
    ['transaction_id', 'int'],
    ['camera_id', 'int'],
    ['captured_at', 'time'],
    ['content_type', 'text'],
    ['sha256', 'base64'],
  );
  const changed = await upsertRows(
    db,
    { table: 'images', key: ['uuid'], columns, stamp: true },
    rows,
    stamp,
  );
  const kept = new Set(digests);
  await dropUnusedBlobs(
    db,
    before.map((r) => r.sha256).filter((d) => !kept.has(d)),
  );
  return changed;
}
