import type { UnitSpec } from '../rollups/unit-columns.js';
import { zoneAlignment } from './zones.js';

// The output buckets of a summary request (contract 6), and how its range [start, end) splits
// between rollups of one level and the finer sources around them (summary-units.ts): what both
// calculation bases, event- and time-weighted, share.

export type Interval = '15m' | '1h' | '1d' | 'all';

export interface SummaryRequest {
  ids: number[];
  /** Epoch ms, [start, end). */
  start: number;
  end: number;
  interval: Interval;
  zone: string;
}

const QUARTER = 15 * 60_000;
const floorTo = (time: number, step: number) => Math.floor(time / step) * step;
const ceilTo = (time: number, step: number) => Math.ceil(time / step) * step;

/** Rollup level (minutes) whose UTC-aligned buckets nest in every output bucket; 0: logs only. */
export function unitLevel(
  interval: Interval,
  zone: string,
  start: number,
  end: number,
): 0 | 15 | 60 | 1440 {
  if (interval === 'all') return 1440;
  const align = zoneAlignment(zone, start, end);
  if (align === 'none') return 0;
  if (interval === '15m') return 15;
  if (interval === '1h') return align === 'quarter' ? 15 : 60;
  return align === 'utc' ? 1440 : align === 'hour' ? 60 : 15;
}

/**
 * The UTC instants that split [start, end) between the sources: logs in [start, quartersFrom) and
 * [quartersTo, end), 15-minute rollups in [quartersFrom, levelFrom) and [levelTo, quartersTo), level
 * rollups in [levelFrom, levelTo).
 */
export function splitRange(start: number, end: number, level: number) {
  if (level === 0) return { quartersFrom: end, quartersTo: end, levelFrom: end, levelTo: end };
  let quartersFrom = ceilTo(start, QUARTER);
  let quartersTo = floorTo(end, QUARTER);
  if (quartersFrom >= quartersTo) quartersFrom = quartersTo = end;
  let levelFrom = ceilTo(quartersFrom, level * 60_000);
  let levelTo = floorTo(quartersTo, level * 60_000);
  if (levelFrom >= levelTo) levelFrom = levelTo = quartersTo;
  return { quartersFrom, quartersTo, levelFrom, levelTo };
}

/**
 * The rollup level of a request and the parameters of its statements: ids, start, end, zone, then
 * the instants that split the range between the sources (splitRange), times as ISO text.
 */
export function summaryParams(req: SummaryRequest) {
  const level = unitLevel(req.interval, req.zone, req.start, req.end);
  const split = splitRange(req.start, req.end, level);
  const iso = (time: number) => new Date(time).toISOString();
  const sources = [split.quartersFrom, split.quartersTo, split.levelFrom, split.levelTo];
  return { level, params: [req.ids, iso(req.start), iso(req.end), req.zone, ...sources.map(iso)] };
}

// Parameters: ids, start, end, zone, quartersFrom, quartersTo, levelFrom, levelTo (times as ISO
// text). Not every statement uses every one; the casts in the final WHERE give each its type.
export const TYPED = `$2::timestamptz IS NOT NULL AND $3::timestamptz IS NOT NULL AND $4::text IS NOT NULL AND $5::timestamptz IS NOT NULL
   AND $6::timestamptz IS NOT NULL AND $7::timestamptz IS NOT NULL AND $8::timestamptz IS NOT NULL`;

/** SQL: the epoch milliseconds of a timestamptz. */
export const epochMs = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

/** SQL of an output bucket's start on the zone's clock for the instant t0 ($4: the zone), and of its end after its start grp. */
export const BUCKET: Record<Interval, { start: string; end: string }> = {
  '15m': {
    start: `t0 - ((t0 AT TIME ZONE $4) - date_bin('15 minutes', t0 AT TIME ZONE $4, TIMESTAMP '2000-01-01'))`,
    end: `grp + interval '15 minutes'`,
  },
  '1h': {
    start: `t0 - ((t0 AT TIME ZONE $4) - date_trunc('hour', t0 AT TIME ZONE $4))`,
    end: `grp + interval '1 hour'`,
  },
  '1d': {
    start: `date_trunc('day', t0 AT TIME ZONE $4) AT TIME ZONE $4`,
    end: `(date_trunc('day', grp AT TIME ZONE $4) + interval '1 day') AT TIME ZONE $4`,
  },
  all: { start: `$2::timestamptz`, end: `$3::timestamptz` },
};

/** The output bucket of a unit starting at t0: none for the units that only feed a meter's volume chain. */
export const bucketOfUnit = (interval: Interval) =>
  `CASE WHEN t0 = '-infinity' THEN NULL ELSE ${BUCKET[interval].start} END`;

const WIDTH: Record<Interval, number> = { '15m': 15, '1h': 60, '1d': 1440, all: 0 };

/**
 * Whether the interval is the level itself (15m from quarters, 1h from hours in a whole-hour zone,
 * 1d from days in UTC): then each clean level row in [levelFrom, levelTo) is one output bucket by
 * itself, and those rows go out as they are, without merging; only the rest (edges, stale buckets)
 * is merged. Meters merge everything: each bucket's volume links to the unit before it.
 */
export const directLevel = (spec: UnitSpec, interval: Interval, level: number) =>
  !spec.chain && level > 0 && WIDTH[interval] === level;

/** Elements a request may produce at most (ids × buckets), bounding the work and the response. */
export function estimateElements(
  req: Pick<SummaryRequest, 'ids' | 'start' | 'end' | 'interval'>,
): number {
  const width = { '15m': QUARTER, '1h': 3_600_000, '1d': 86_400_000, all: Infinity }[req.interval];
  return req.ids.length * (Math.ceil((req.end - req.start) / width) + 2);
}
