import type { Queryable } from '../../db/index.js';
import { isoTime } from '../../time.js';
import { EPOCH } from '../rollups/units.js';
import { BUCKET, epochMs, type SummaryRequest } from './summary-buckets.js';
import { zoneAlignment } from './zones.js';

// Every output bucket of a time-weighted summary request, with samples or not (a gap bucket still
// gets an element): the event-weighted summaries only know the buckets that hold units.

export interface OutputBucket {
  /** The bucket's start on the zone's clock, before the cut (as the rows of its units give it); epoch ms. */
  start: number;
  /** The part of it inside the request, [from, to); epoch ms. */
  from: number;
  to: number;
  /** An element's text between its id and count, per format (export/records.ts' Format). */
  json: string;
  csv: string;
}

/**
 * A request's output buckets per zone, made by its first page and shared by the others (a page
 * holds a few equipment; a year of hours is 8,760 buckets, each with its times as text). Read only
 * once made.
 */
export type SharedBuckets = Map<string, Promise<OutputBucket[]>>;

/**
 * The buckets of [start, end) on the zone's clock. Every bucket holds one instant of a lattice finer
 * than the shortest bucket (quarters; hours for days, which last at least 23 h), plus start and the
 * last millisecond for the cut ones; the database maps each to its bucket as it does for the units.
 * Parameters: $1 null, $2 start, $3 end, $4 zone.
 */
function bucketsSql(req: SummaryRequest): string {
  const step = req.interval === '1d' ? '1 hour' : '15 minutes';
  const bucket = BUCKET[req.interval];
  return `SELECT ${epochMs('grp')} AS start_ms, ${epochMs('greatest(grp, $2::timestamptz)')} AS from_ms, ${epochMs(`least(${bucket.end}, $3::timestamptz)`)} AS to_ms
    FROM (SELECT DISTINCT ${bucket.start} AS grp FROM (
      SELECT $2::timestamptz AS t0 UNION ALL SELECT $3::timestamptz - interval '1 millisecond'
      UNION ALL SELECT generate_series(date_bin('${step}', $2::timestamptz, ${EPOCH}) + interval '${step}', $3::timestamptz, interval '${step}')) c
      WHERE t0 < $3::timestamptz) x
    WHERE $1::int IS NULL AND $4::text IS NOT NULL ORDER BY grp`;
}

const WIDTH_MS = { '15m': 15 * 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;

/**
 * The buckets computed here where the zone's clock lines up with them over the whole range (UTC
 * quarters, hours and days): the same instants the database gives, without asking it.
 */
function alignedBuckets(
  req: SummaryRequest,
): { start: number; from: number; to: number }[] | undefined {
  if (req.interval === 'all') return [{ start: req.start, from: req.start, to: req.end }];
  const align = zoneAlignment(req.zone, req.start, req.end);
  const fits =
    req.interval === '15m'
      ? align !== 'none'
      : req.interval === '1h'
        ? align === 'utc' || align === 'hour'
        : align === 'utc';
  if (!fits) return undefined;
  const width = WIDTH_MS[req.interval];
  const buckets: { start: number; from: number; to: number }[] = [];
  for (let start = Math.floor(req.start / width) * width; start < req.end; start += width)
    buckets.push({ start, from: Math.max(start, req.start), to: Math.min(start + width, req.end) });
  return buckets;
}

async function makeBuckets(
  db: Queryable,
  req: SummaryRequest,
  params: unknown[],
): Promise<OutputBucket[]> {
  const times =
    alignedBuckets(req) ??
    (
      await db.query<{ start_ms: number; from_ms: number; to_ms: number }>(bucketsSql(req), [
        null,
        ...params.slice(1, 4),
      ])
    ).map((row) => ({ start: row.start_ms, from: row.from_ms, to: row.to_ms }));
  return times.map((time): OutputBucket => {
    const fromIso = isoTime(Number(time.from));
    const toIso = isoTime(Number(time.to));
    return {
      start: Number(time.start),
      from: Number(time.from),
      to: Number(time.to),
      json: `,"start":"${fromIso}","end":"${toIso}"`,
      csv: `,${fromIso},${toIso}`,
    };
  });
}

/** The output buckets of a request (`params`: summaryParams'), from `shared` where another page made them. */
export function outputBuckets(
  db: Queryable,
  req: SummaryRequest,
  params: unknown[],
  shared: SharedBuckets,
): Promise<OutputBucket[]> {
  const key = `${req.start} ${req.end} ${req.interval} ${req.zone}`;
  let buckets = shared.get(key);
  if (!buckets) {
    buckets = makeBuckets(db, req, params);
    shared.set(key, buckets);
  }
  return buckets;
}
