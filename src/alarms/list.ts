import { requireSites, type Access } from '../auth/access.js';
import type { Queryable } from '../db/index.js';
import { notFound } from '../errors.js';
import { parseRange } from '../time.js';
import { readJournal, type JournalEntry } from './journal.js';
import { LIST_COLUMNS, toListRecord, type AlarmListRecord, type ListRow } from './record.js';
import { alarmIdsOf } from './resolve.js';

// The alarm list and the journal (contract 16): what was raised over a range, resolved alarms
// included, and every change, both paged like the sites list.

/** The longest range either reads. */
export const MAX_RANGE_DAYS = 366;

export const ALARM_STATES = ['all', 'active', 'unacknowledged'] as const;
export type AlarmState = (typeof ALARM_STATES)[number];

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Paged<T> {
  data: T[];
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

const paged = <T>({ page, perPage }: PageRequest, data: T[], total: number): Paged<T> => ({
  data,
  page,
  perPage,
  total,
  totalPages: Math.ceil(total / perPage),
});

export interface AlarmListRequest extends PageRequest {
  siteIds: number[];
  start: string;
  end: string;
  state?: AlarmState;
}

/**
 * The alarms of the sites raised (RaisedAt) in [start, end), newest first (RaisedAt, then id, both
 * descending): `active` keeps the unresolved, `unacknowledged` those not acknowledged, resolved or not.
 */
export async function listAlarms(
  db: Queryable,
  access: Access,
  req: AlarmListRequest,
): Promise<Paged<AlarmListRecord>> {
  const range = parseRange(req.start, req.end, MAX_RANGE_DAYS);
  await requireSites(db, access, req.siteIds);
  const state = req.state ?? 'all';
  const where = `site_id = ANY($1::int[]) AND raised_at >= $2 AND raised_at < $3
    AND (NOT $4::boolean OR resolved_at IS NULL) AND (NOT $5::boolean OR acknowledged_at IS NULL)`;
  const params = [
    [...new Set(req.siteIds)],
    new Date(range.start),
    new Date(range.end),
    state === 'active',
    state === 'unacknowledged',
  ];
  const [rows, [count]] = await Promise.all([
    db.query<ListRow>(
      `SELECT ${LIST_COLUMNS} FROM site_alarms WHERE ${where}
        ORDER BY raised_at DESC, alarm_id DESC LIMIT $6 OFFSET $7`,
      [...params, req.perPage, (req.page - 1) * req.perPage],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM site_alarms WHERE ${where}`, params),
  ]);
  return paged(req, rows.map(toListRecord), count.n);
}

export interface JournalRequest extends PageRequest {
  siteIds: number[];
  start: string;
  end: string;
  SiteAlarmLogID?: string | number;
}

/**
 * The journal entries of the sites with Time in [start, end), oldest first; only one alarm's with
 * SiteAlarmLogID, which must be an alarm of one of the sites (else 404, whoever's it is).
 */
export async function listJournal(
  db: Queryable,
  access: Access,
  req: JournalRequest,
): Promise<Paged<JournalEntry>> {
  const range = parseRange(req.start, req.end, MAX_RANGE_DAYS);
  const alarmId =
    req.SiteAlarmLogID === undefined
      ? null
      : alarmIdsOf([{ SiteAlarmLogID: req.SiteAlarmLogID }], () => '')[0];
  await requireSites(db, access, req.siteIds);
  const siteIds = [...new Set(req.siteIds)];
  if (alarmId !== null) {
    const [known] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM site_alarms WHERE alarm_id = $1 AND site_id = ANY($2::int[])`,
      [alarmId, siteIds],
    );
    if (!known.n)
      throw notFound(`alarm ${alarmId} does not exist at the requested sites`, [
        {
          path: '/SiteAlarmLogID',
          message: `alarm ${alarmId} does not exist at the requested sites`,
        },
      ]);
  }
  const { data, total } = await readJournal(db, {
    siteIds,
    ...range,
    alarmId,
    limit: req.perPage,
    offset: (req.page - 1) * req.perPage,
  });
  return paged(req, data, total);
}
