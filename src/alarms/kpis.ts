import { requireSites, type Access } from '../auth/access.js';
import type { Queryable } from '../db/index.js';
import { badRequest } from '../errors.js';
import { parseRange, toIso } from '../time.js';
import { MAX_RANGE_DAYS } from './list.js';

// Alarm performance (contract 16, after ISA-18.2 and EEMUA 191): per site, how many alarms the
// service raised over a range and how they came (per 10 minutes, floods), how many stand, how soon
// they are acknowledged, which keys are raised most and which chatter. From the alarm records, whose
// RaisedAt, AcknowledgedAt and ResolvedAt are the times of their journal entries. The database
// aggregates (by site, window and key), so what comes back follows the windows and keys, not the alarms.

const TEN_MINUTES = 600_000;
/** A window with more alarms than this is a flood (EEMUA 191: 10 per 10 minutes). */
const FLOOD_ABOVE = 10;
/** A key raised this many times within CHATTER_MS chatters. */
const CHATTER_COUNT = 3;
const CHATTER_MS = 60_000;
const TOP = 10;
const STANDING_AFTER_MS = 24 * 3_600_000;

export const SERIES = { '10m': TEN_MINUTES, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type SeriesLength = keyof typeof SERIES;
/** Most Series elements one request may ask for (sites x windows). */
export const MAX_SERIES_POINTS = 100_000;

export interface KeyCount {
  EquipmentTypeID: number | null;
  EquipmentID: string | null;
  AlarmType: string;
  Count: number;
}

export interface AlarmKpis {
  SiteID: number;
  Raised: number;
  AveragePer10Min: number;
  Peak10Min: number;
  FloodPercent: number;
  Standing: number;
  MeanSecondsToAcknowledge: number | null;
  TopAlarms: KeyCount[];
  Chattering: KeyCount[];
  Series?: { Start: string; Raised: number }[];
}

export interface KpiRequest {
  siteIds: number[];
  start: string;
  end: string;
  series?: SeriesLength;
}

/** The aligned windows of `length` ms that overlap [start, end): the first's index and how many. */
const windowsOf = (start: number, end: number, length: number) => {
  const first = Math.floor(start / length);
  return { first, count: Math.ceil(end / length) - first };
};

const IN_RANGE = `site_id = ANY($1::int[]) AND raised_at >= $2 AND raised_at < $3`;

export async function alarmKpis(
  db: Queryable,
  access: Access,
  req: KpiRequest,
): Promise<AlarmKpis[]> {
  const { start, end } = parseRange(req.start, req.end, MAX_RANGE_DAYS);
  const siteIds = [...new Set(req.siteIds)];
  const seriesMs = req.series ? SERIES[req.series] : null;
  const series = seriesMs ? windowsOf(start, end, seriesMs) : null;
  if (series && series.count * siteIds.length > MAX_SERIES_POINTS)
    throw badRequest(
      `series: ${series.count} windows for each of ${siteIds.length} sites is more than ${MAX_SERIES_POINTS} elements; ask for a longer series, a shorter range or fewer sites`,
      [{ path: '/series', message: `more than ${MAX_SERIES_POINTS} Series elements in all` }],
    );
  await requireSites(db, access, siteIds);
  const range = [siteIds, new Date(start), new Date(end)];
  const [totals, windows, seriesRows, keys, standing] = await Promise.all([
    db.query<{ site_id: number; raised: number; mean_ack: number | string | null }>(
      `SELECT site_id, count(*)::int AS raised,
              avg(extract(epoch FROM acknowledged_at - raised_at)) FILTER (WHERE acknowledged_at IS NOT NULL)::float8 AS mean_ack
         FROM site_alarms WHERE ${IN_RANGE} GROUP BY site_id`,
      range,
    ),
    countByWindow(db, range, TEN_MINUTES),
    seriesMs ? countByWindow(db, range, seriesMs) : Promise.resolve([]),
    db.query<{
      site_id: number;
      type_id: number | null;
      equipment_id: string | null;
      alarm_type: string;
      n: number;
      chatters: boolean;
    }>(
      `SELECT site_id, equipment_type_id AS type_id, equipment_id::text, alarm_type, count(*)::int AS n,
              coalesce(bool_or(raised_at - third_before <= $4::int * interval '1 millisecond'), false) AS chatters
         FROM (SELECT site_id, equipment_type_id, equipment_id, alarm_type, raised_at,
                      lag(raised_at, ${CHATTER_COUNT - 1}) OVER (PARTITION BY site_id, equipment_type_id, equipment_id, alarm_type
                                                                 ORDER BY raised_at, alarm_id) AS third_before
                 FROM site_alarms WHERE ${IN_RANGE}) a
        GROUP BY site_id, equipment_type_id, equipment_id, alarm_type`,
      [...range, CHATTER_MS],
    ),
    // Raised before end - 24 h and not resolved at end: those still unresolved, and those resolved since.
    db.query<{ site_id: number; n: number }>(
      `SELECT site_id, count(*)::int AS n FROM (
         SELECT site_id FROM site_alarms WHERE site_id = ANY($1::int[]) AND resolved_at IS NULL AND raised_at < $2
         UNION ALL
         SELECT site_id FROM site_alarms WHERE site_id = ANY($1::int[]) AND resolved_at >= $3 AND raised_at < $2) s
        GROUP BY site_id`,
      [siteIds, new Date(end - STANDING_AFTER_MS), new Date(end)],
    ),
  ]);
  const tenMinutes = windowsOf(start, end, TEN_MINUTES).count;
  return siteIds.map((siteId) => {
    const total = totals.find((t) => t.site_id === siteId);
    const raised = total?.raised ?? 0;
    const counts = windows.filter((w) => w.site_id === siteId).map((w) => w.n);
    const siteKeys = keys
      .filter((k) => k.site_id === siteId)
      .sort(
        (a, b) =>
          b.n - a.n ||
          (a.type_id ?? 0) - (b.type_id ?? 0) ||
          Number(a.equipment_id ?? 0) - Number(b.equipment_id ?? 0) ||
          (a.alarm_type < b.alarm_type ? -1 : a.alarm_type > b.alarm_type ? 1 : 0),
      );
    const keyCount = (k: (typeof siteKeys)[number]): KeyCount => ({
      EquipmentTypeID: k.type_id,
      EquipmentID: k.equipment_id,
      AlarmType: k.alarm_type,
      Count: k.n,
    });
    const kpis: AlarmKpis = {
      SiteID: siteId,
      Raised: raised,
      AveragePer10Min: raised / tenMinutes,
      Peak10Min: Math.max(0, ...counts),
      FloodPercent: (100 * counts.filter((n) => n > FLOOD_ABOVE).length) / tenMinutes,
      Standing: standing.find((s) => s.site_id === siteId)?.n ?? 0,
      MeanSecondsToAcknowledge:
        total?.mean_ack === null || total?.mean_ack === undefined ? null : Number(total.mean_ack),
      TopAlarms: siteKeys.slice(0, TOP).map(keyCount),
      Chattering: siteKeys.filter((k) => k.chatters).map(keyCount),
    };
    if (series && seriesMs) {
      const bySlot = new Map(
        seriesRows.filter((w) => w.site_id === siteId).map((w) => [w.slot, w.n]),
      );
      kpis.Series = Array.from({ length: series.count }, (_, i) => ({
        Start: toIso((series.first + i) * seriesMs)!,
        Raised: bySlot.get(series.first + i) ?? 0,
      }));
    }
    return kpis;
  });
}

/** Alarms raised in the range per site and aligned window of `length` ms (only windows with some). */
async function countByWindow(db: Queryable, range: unknown[], length: number) {
  const rows = await db.query<{ site_id: number; slot: string; n: number }>(
    `SELECT site_id, floor(extract(epoch FROM raised_at) * 1000 / $4)::int8::text AS slot, count(*)::int AS n
       FROM site_alarms WHERE ${IN_RANGE} GROUP BY 1, 2`,
    [...range, length],
  );
  return rows.map((r) => ({ site_id: r.site_id, slot: Number(r.slot), n: r.n }));
}
