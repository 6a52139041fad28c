import { rowPages } from '../db/pager.js';
import type { Values } from '../export/records.js';
import { toIso } from '../time.js';
import { PAGE_SIZE, rangeParams, type RecordPages } from './pages.js';

// Transaction (ticket) logs of contract 7, read a page at a time in (TransactionDate, TransactionID)
// order with a keyset cursor, so a year of a busy site is never held in memory at once.

/** TransactionLogDto's fields in output order; MotionCaptureImageIDs only with motionCap. */
export const TRANSACTION_LOG_FIELDS = [
  'TransactionID',
  'TicketNumber',
  'SiteID',
  'SiteName',
  'SiteCompany',
  'TransactionDate',
  'HaulerCompany',
  'DriverName',
  'TruckNumber',
  'FluidType',
  'Volume',
  'VolumeUnits',
  'Notes',
  'TicketImageIDs',
] as const;
export const transactionLogFields = (motionCap: boolean): readonly string[] =>
  motionCap ? [...TRANSACTION_LOG_FIELDS, 'MotionCaptureImageIDs'] : TRANSACTION_LOG_FIELDS;

export interface TransactionQuery {
  siteIds: number[];
  start: number;
  end: number;
  motionCap: boolean;
}

const imageIds = (kind: 'ticket' | 'motion') =>
  `ARRAY(SELECT i.uuid::text FROM images i WHERE i.transaction_id = t.transaction_id AND i.kind = '${kind}'
          ORDER BY i.captured_at NULLS LAST, i.uuid)`;

/**
 * One page: each site's next rows by its (site_id, transaction_date) index, merged. The cursor is
 * also a lower bound on the date, so a later page starts its index scan where the last one ended.
 */
const pageSql = (cursor: boolean, motionCap: boolean) => `
  SELECT t.transaction_id, t.ticket_number::float8 AS ticket_number, t.site_id, s.name AS site_name, c.name AS company_name,
         t.transaction_date, t.hauler_company, t.driver_name, t.truck_number, t.fluid_type, t.volume, t.volume_units, t.notes,
         ${imageIds('ticket')} AS ticket_images${motionCap ? `, ${imageIds('motion')} AS motion_images` : ''}
    FROM unnest($1::int[]) AS r(site_id)
    CROSS JOIN LATERAL (
      SELECT * FROM transactions x
       WHERE x.site_id = r.site_id AND x.transaction_date >= $2 AND x.transaction_date < $3
         ${cursor ? 'AND x.transaction_date >= $5 AND (x.transaction_date, x.transaction_id) > ($5::timestamptz, $6::int)' : ''}
       ORDER BY x.transaction_date, x.transaction_id
       LIMIT $4) t
    JOIN sites s ON s.site_id = t.site_id
    JOIN companies c ON c.company_id = s.company_id
   ORDER BY t.transaction_date, t.transaction_id
   LIMIT $4`;

interface TransactionRow {
  transaction_id: number;
  ticket_number: number;
  site_id: number;
  site_name: string;
  company_name: string;
  transaction_date: Date | string;
  hauler_company: string | null;
  driver_name: string | null;
  truck_number: string | null;
  fluid_type: string | null;
  volume: number | null;
  volume_units: string | null;
  notes: string | null;
  ticket_images: string[];
  motion_images?: string[];
}

/** Pages of TransactionLogDto values (in transactionLogFields order) until the range is exhausted. */
export const transactionPages: RecordPages<TransactionQuery> = (db, q, pageSize = PAGE_SIZE) =>
  rowPages(db, pageSize, {
    sql: (after) => pageSql(after, q.motionCap),
    params: [q.siteIds, ...rangeParams(q), pageSize],
    // Times carry milliseconds only (every input goes through parseTime), so the ISO cursor is exact.
    keyOf: (r: TransactionRow): [string, number] => [toIso(r.transaction_date)!, r.transaction_id],
    page: (rows) => rows.map((r) => toValues(r, q.motionCap)),
  });

function toValues(r: TransactionRow, motionCap: boolean): Values {
  const v: Values = [
    r.transaction_id,
    r.ticket_number,
    r.site_id,
    r.site_name,
    r.company_name,
    toIso(r.transaction_date),
    r.hauler_company,
    r.driver_name,
    r.truck_number,
    r.fluid_type,
    r.volume,
    r.volume_units,
    r.notes,
    r.ticket_images,
  ];
  if (motionCap) v.push(r.motion_images);
  return v;
}
