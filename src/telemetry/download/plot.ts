import type { Access } from '../../auth/access.js';
import { archivedLevel, cutPieces, logSlices, rollupSlices } from '../archive/slices.js';
import { KINDS } from '../kinds.js';
import { UNITS } from '../rollups/units.js';
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

/** A statement's parameters after the sensor ($2 on): each an array of numbers of its type. */
type Arrays = [values: number[], type: NumericArrayType][];

const ROLLUP_COLUMNS = [
  'first_ts',
  'v_first',
  'last_ts',
  'v_last',
  'v_min',
  'v_tmin',
  'v_max',
  'v_tmax',
];
/** A rollup's samples as plot numbers: first, last, lowest and highest (time, value each). */
const SAMPLES = [
  ['first_ts', 'v_first'],
  ['last_ts', 'v_last'],
  ['v_tmin', 'v_min'],
  ['v_tmax', 'v_max'],
];

// The rows of each part go to the service as binary float8 (float8-rows.ts), which takes each part's
// first, last, lowest and highest sample from them: for the 20,000 rows of a year in 1,000 parts that
// is several times cheaper than the database's min and max over [time, value] arrays (an array made
// and compared per row). Rollup segments and log segments are two statements, sent at once on two
// connections (two cores). Each reads rows and archived days apart:
// - rows: a lookup per segment by the table's key (OFFSET 0 keeps each lateral a lookup: pulled up
//   into a join, it was planned as a scan of every row of the sensor's level: seconds);
// - archived days (archive/slices.ts): the segments cut at UTC days into pieces, each archive row the
//   pieces touch found once by its key and decompressed once, each piece a slice of its arrays (the
//   archive row decoded whole for every segment took about ten times the plot's time over rows).
// A day's rows and its archive row never exist together, so each sample is read once.

/**
 * Rollup rows: part, first and last sample, lowest and highest (time, value each). $2–$5 the
 * segments (level, a, b, part), $6–$11 the pieces of archived levels (archive/slices.ts), $12 the
 * part of each piece.
 */
const ROLLUPS_SQL = (() => {
  const spec = UNITS.sensor;
  const rows = `SELECT ${ROLLUP_COLUMNS.join(', ')} FROM ${spec.rollupTable}
      WHERE ${spec.idColumn} = $1 AND level = s.level AND bucket >= to_timestamp(s.a / 1000) AND bucket < to_timestamp(s.b / 1000)`;
  const slices = rollupSlices(
    'sensor',
    {
      ids: '= $1',
      levels: '$6::int4[]',
      days: '$7::float8[]',
      first: '$8::int4[]',
      count: '$9::int4[]',
      from: '$10::int4[]',
      to: '$11::int4[]',
    },
    ROLLUP_COLUMNS,
  );
  return `SELECT string_agg(x, ''::bytea) AS nums FROM (
    SELECT ${float8Bytes(['s.part', ...SAMPLES.flatMap(([t, v]) => [ms(`r.${t}`), `r.${v}`])])} AS x
      FROM unnest($2::int4[], $3::float8[], $4::float8[], $5::int4[]) AS s(level, a, b, part)
      CROSS JOIN LATERAL (${rows} OFFSET 0) r
    UNION ALL
    SELECT ${float8Bytes(['($12::int4[])[r.piece]', ...SAMPLES.flatMap(([t, v]) => [ms(`r.${t}`), `r.${v}`])])}
      FROM ${slices} r) q`;
})();
const ROLLUP_WIDTH = 9;

/**
 * Log rows: part, time, value. A lookup (plot-segments.ts) reads the logs of [a, b); those from
 * `split` on belong to the next part. $2–$5 the lookups (split, a, b, part) over rows, $6–$10 the
 * pieces over archived days (archive/slices.ts), $11 and $12 each piece's split and part. Their
 * order does not matter (Extremes keeps the earliest of equal values).
 */
const LOGS_SQL = (() => {
  const spec = KINDS.sensor;
  const rows = `SELECT ts, value FROM ${spec.table}
      WHERE ${spec.idColumn} = $1 AND ts >= to_timestamp(s.a / 1000) AND ts < to_timestamp(s.b / 1000)`;
  const slices = logSlices(
    'sensor',
    {
      ids: '= $1',
      days: '$6::float8[]',
      first: '$7::int4[]',
      count: '$8::int4[]',
      from: '$9::int4[]',
      to: '$10::int4[]',
    },
    ['value'],
  );
  return `SELECT string_agg(x, ''::bytea) AS nums FROM (
    SELECT ${float8Bytes(['CASE WHEN g.ts < to_timestamp(s.split / 1000) THEN s.part ELSE s.part + 1 END', ms('g.ts'), 'g.value'])} AS x
      FROM unnest($2::float8[], $3::float8[], $4::float8[], $5::int4[]) AS s(split, a, b, part)
      CROSS JOIN LATERAL (${rows} OFFSET 0) g
    UNION ALL
    SELECT ${float8Bytes(['CASE WHEN g.t < ($11::float8[])[g.piece] THEN ($12::int4[])[g.piece] ELSE ($12::int4[])[g.piece] + 1 END', 'g.t', 'g.value'])}
      FROM ${slices} g) q`;
})();
const LOG_WIDTH = 3;

/** The pieces' parameters (archive/slices.ts cutPieces), levels first for rollups. */
const pieceArrays = (p: ReturnType<typeof cutPieces>, levels: boolean): Arrays => [
  ...(levels ? [[p.keys, 'int4[]'] as Arrays[number]] : []),
  [p.days, 'float8[]'],
  [p.first, 'int4[]'],
  [p.count, 'int4[]'],
  [p.from, 'int4[]'],
  [p.to, 'int4[]'],
];

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
  const run = async (sql: string, arrays: Arrays, any: boolean) => {
    if (!any) return new Float64Array(0);
    const [{ nums }] = await db.query<{ nums: Uint8Array | null }>(
      sql,
      [body.sensorId, ...arrays.map(([values, type]) => numericArray(values, type, binary))],
      { indexOrder: true },
    );
    return readFloat8(nums);
  };
  const column = <T>(list: T[][], i: number) => list.map((s) => s[i]) as number[];
  const rollupSegments = segments.filter((s) => s[0] > 0);
  const archived = rollupSegments.filter((s) => archivedLevel(s[0]));
  const rollupPieces = cutPieces(
    archived.map(([level, a, b]) => ({ key: level, a, b })),
    (level) => level * 60_000,
  );
  const lookups = logLookups(segments);
  const logPieces = cutPieces(
    lookups.map(([, a, b]) => ({ key: 0, a, b })),
    () => 1,
  );
  const [rollups, logs] = await Promise.all([
    run(
      ROLLUPS_SQL,
      [
        [column(rollupSegments, 0), 'int4[]'],
        [column(rollupSegments, 1), 'float8[]'],
        [column(rollupSegments, 2), 'float8[]'],
        [column(rollupSegments, 3), 'int4[]'],
        ...pieceArrays(rollupPieces, true),
        [rollupPieces.range.map((r) => archived[r][3]), 'int4[]'],
      ],
      rollupSegments.length > 0,
    ),
    run(
      LOGS_SQL,
      [
        [column(lookups, 0), 'float8[]'],
        [column(lookups, 1), 'float8[]'],
        [column(lookups, 2), 'float8[]'],
        [column(lookups, 3), 'int4[]'],
        ...pieceArrays(logPieces, false),
        [logPieces.range.map((r) => lookups[r][0]), 'float8[]'],
        [logPieces.range.map((r) => lookups[r][3]), 'int4[]'],
      ],
      lookups.length > 0,
    ),
  ]);
  const parts = new Extremes(body.intervals);
  const r = rollups;
  for (let o = 0; o < r.length; o += ROLLUP_WIDTH)
    parts.add(r[o], r[o + 1], r[o + 2], r[o + 3], r[o + 4], r[o + 5], r[o + 6], r[o + 7], r[o + 8]);
  for (let o = 0; o < logs.length; o += LOG_WIDTH) {
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
