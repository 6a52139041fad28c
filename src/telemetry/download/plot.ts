import { rollupRows } from '../archive/rollup-days.js';
import type { Access } from '../../auth/access.js';
import { logRows } from '../archive/days.js';
import { requireEquipment } from '../../auth/access.js';
import { numericArray, takesBinary, type NumericArrayType } from '../../db/array-params.js';
import type { Queryable } from '../../db/index.js';
import type { Values } from '../../export/records.js';
import { parseRange } from '../../time.js';
import { float8Bytes, readFloat8 } from './float8-rows.js';
import type { Download } from './index.js';
import { Extremes, plotRecords } from './plot-extremes.js';
import { logLookups, planSegments } from './plot-segments.js';

// Plot values (contract 13): [start, end) cut into `intervals` equal parts; of each part its first,
// last, lowest and highest sample (stored samples, each once), read from rollups where they fit
// and from logs elsewhere (plot-segments.ts).

export interface PlotBody {
  sensorId: number;
  start: string;
  end: string;
  intervals: number;
}

export const PLOT_FIELDS = ['sensorID', 'timestamp', 'value'];
const MAX_DAYS = 366;

const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;

/** A statement over segments: its SQL, the types of its arrays ($2 on), the numbers of a row. */
interface SegmentStatement {
  sql: string;
  types: NumericArrayType[];
  width: number;
}

// The rows of each part go to the service as binary float8 (float8-rows.ts), which takes each part's
// first, last, lowest and highest sample from them: for the 20,000 rows of a year in 1,000 parts that
// is several times cheaper than the database's min and max over [time, value] arrays (an array made
// and compared per row). Rollup segments and log segments are two statements, sent at once on two
// connections (two cores). OFFSET 0 keeps each lateral a lookup per segment (pulled up into a join,
// it was planned as a scan of every row of the sensor's level: seconds).
/**
 * The `row` numbers of the rows `lookup` (aliased `alias`) finds for each segment s, the segments
 * given as one array per column ($2 on, each of its type).
 */
const overSegments = (
  columns: [name: string, type: NumericArrayType][],
  lookup: string,
  alias: string,
  row: string[],
): SegmentStatement => ({
  sql: `SELECT string_agg(${float8Bytes(row)}, ''::bytea) AS nums
  FROM unnest(${columns.map(([, type], i) => `$${i + 2}::${type}`).join(', ')}) AS s(${columns.map(([name]) => name).join(', ')})
  CROSS JOIN LATERAL (${lookup} OFFSET 0) ${alias}`,
  types: columns.map(([, type]) => type),
  width: row.length,
});

/** Rollup rows: part, first and last sample, lowest and highest (time, value each). */
const ROLLUPS = overSegments(
  [
    ['level', 'int4[]'],
    ['a', 'float8[]'],
    ['b', 'float8[]'],
    ['part', 'int4[]'],
  ],
  // Rows and archived days' units (archive/rollup-days.ts).
  `SELECT r.first_ts, r.v_first, r.last_ts, r.v_last, r.v_min, r.v_tmin, r.v_max, r.v_tmax FROM ${rollupRows(
    'sensor',
    {
      ids: '= $1',
      level: 's.level',
      from: 'to_timestamp(s.a / 1000)',
      to: 'to_timestamp(s.b / 1000)',
      columns: ['first_ts', 'v_first', 'last_ts', 'v_last', 'v_min', 'v_tmin', 'v_max', 'v_tmax'],
    },
  )} r`,
  'r',
  [
    's.part',
    ...[
      ['first_ts', 'v_first'],
      ['last_ts', 'v_last'],
      ['v_tmin', 'v_min'],
      ['v_tmax', 'v_max'],
    ].flatMap(([t, v]) => [ms(`r.${t}`), `r.${v}`]),
  ],
);

/**
 * Log rows: part, time, value. A lookup (plot-segments.ts) reads the logs of [a, b); those from
 * `split` on belong to the next part. The logs are the rows and the archived days of [a, b)
 * (archive/days.ts logRows: the days found by key, each decoded whole, then cut to [a, b)); their
 * order does not matter (Extremes keeps the earliest of equal values).
 */
const LOGS = overSegments(
  [
    ['split', 'float8[]'],
    ['a', 'float8[]'],
    ['b', 'float8[]'],
    ['part', 'int4[]'],
  ],
  `SELECT g.ts, g.value FROM ${logRows('sensor', { ids: '= $1', from: 'to_timestamp(s.a / 1000)', to: 'to_timestamp(s.b / 1000)' })} g`,
  'g',
  [
    'CASE WHEN g.ts < to_timestamp(s.split / 1000) THEN s.part ELSE s.part + 1 END',
    ms('g.ts'),
    'g.value',
  ],
);

/** Checks the request (400/404/403) and returns its records. */
export async function openPlot(db: Queryable, access: Access, body: PlotBody): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const stale = (
    await db.query<{ b: number }>(
      `SELECT ${ms('bucket')} AS b FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1
         AND bucket >= $2::timestamptz - interval '15 minutes' AND bucket < $3::timestamptz ORDER BY bucket`,
      [body.sensorId, new Date(start).toISOString(), new Date(end).toISOString()],
    )
  ).map((r) => Number(r.b));
  const segments = planSegments(start, end, body.intervals, stale);
  const binary = takesBinary(db);
  const run = async ({ sql, types }: SegmentStatement, list: number[][]) => {
    if (list.length === 0) return new Float64Array(0);
    const columns = types.map((type, i) =>
      numericArray(
        list.map((s) => s[i]),
        type,
        binary,
      ),
    );
    const [{ nums }] = await db.query<{ nums: Uint8Array | null }>(
      sql,
      [body.sensorId, ...columns],
      { indexOrder: true },
    );
    return readFloat8(nums);
  };
  const [rollups, logs] = await Promise.all([
    run(
      ROLLUPS,
      segments.filter((s) => s[0] > 0),
    ),
    run(LOGS, logLookups(segments)),
  ]);
  const parts = new Extremes(body.intervals);
  const r = rollups;
  for (let o = 0; o < r.length; o += ROLLUPS.width)
    parts.add(r[o], r[o + 1], r[o + 2], r[o + 3], r[o + 4], r[o + 5], r[o + 6], r[o + 7], r[o + 8]);
  for (let o = 0; o < logs.length; o += LOGS.width) {
    const t = logs[o + 1];
    const v = logs[o + 2];
    parts.add(logs[o], t, v, t, v, t, v, t, v);
  }
  const records = plotRecords(parts, body.sensorId);
  async function* pages(): AsyncGenerator<Values[]> {
    yield records;
  }
  return { fields: PLOT_FIELDS, pages: pages() };
}
