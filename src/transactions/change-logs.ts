import { rowPages } from '../db/pager.js';
import type { Values } from '../export/records.js';
import { toIso } from '../time.js';
import { PAGE_SIZE, rangeParams, type RecordPages } from './pages.js';

// Transaction change logs (interface 2.9): every later edit of a ticket, read a page at a time in
// (ChangeDate, change id) order. Reading them changes nothing.

export const CHANGE_LOG_FIELDS = [
  'TransactionID',
  'LogTypeName',
  'LogType',
  'TicketNumber',
  'SiteID',
  'SiteName',
  'SiteCompany',
  'Editor',
  'EditorCompany',
  'ChangeDate',
  'ChangeItems',
] as const;

export interface ChangeLogQuery {
  start: number;
  end: number;
  /** null: every site. */
  siteIds: number[] | null;
  /** null: every ticket. */
  ticketNumbers: number[] | null;
}

/** jsonb keeps keys in its own order; records show them in the interface's. */
const changeItem = (i: Record<string, string>) => ({
  PropertyName: i.PropertyName,
  OriginalValue: i.OriginalValue,
  NewValue: i.NewValue,
});

const pageSql = (cursor: boolean) => `
  SELECT c.change_id, c.transaction_id, c.log_type_name, c.log_type, c.ticket_number::float8 AS ticket_number, c.site_id,
         s.name AS site_name, co.name AS company_name, c.editor, c.editor_company, c.change_date, c.change_items
    FROM transaction_changes c
    JOIN sites s ON s.site_id = c.site_id
    JOIN companies co ON co.company_id = s.company_id
   WHERE c.change_date >= $1 AND c.change_date < $2
     AND ($3::int[] IS NULL OR c.site_id = ANY($3::int[]))
     AND ($4::bigint[] IS NULL OR c.ticket_number = ANY($4::bigint[]))
     ${cursor ? 'AND c.change_date >= $6 AND (c.change_date, c.change_id) > ($6::timestamptz, $7::bigint)' : ''}
   ORDER BY c.change_date, c.change_id
   LIMIT $5`;

interface ChangeRow {
  change_id: string;
  transaction_id: number;
  log_type_name: string;
  log_type: number;
  ticket_number: number;
  site_id: number;
  site_name: string;
  company_name: string;
  editor: string;
  editor_company: string;
  change_date: Date | string;
  change_items: Record<string, string>[];
}

/** Pages of change-log records (CHANGE_LOG_FIELDS order) until the range is exhausted. */
export const changeLogPages: RecordPages<ChangeLogQuery> = (db, q, pageSize = PAGE_SIZE) =>
  rowPages(db, pageSize, {
    sql: pageSql,
    params: [...rangeParams(q), q.siteIds, q.ticketNumbers, pageSize],
    keyOf: (r: ChangeRow): [string, string] => [toIso(r.change_date)!, String(r.change_id)],
    page: (rows): Values[] =>
      rows.map((r) => [
        r.transaction_id,
        r.log_type_name,
        r.log_type,
        r.ticket_number,
        r.site_id,
        r.site_name,
        r.company_name,
        r.editor,
        r.editor_company,
        toIso(r.change_date),
        r.change_items.map(changeItem),
      ]),
  });
