import type { Access } from '../../auth/access.js';
import { daysTable } from '../archive/days.js';
import { rollupDaysTable } from '../archive/rollup-days.js';
import {
  archivedKey,
  archivedLevel,
  cutPieces,
  logSlices,
  rollupSlices,
  utcDays,
} from '../archive/slices.js';
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

/** A statement's parameters after the sensor ($2 on): each an array of numbers (or nulls) of its type. */
type Arrays = [values: (number | null)[], type: NumericArrayType][];

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
// connections (two cores). The segments of logs and of archived levels are cut at UTC days, so that
// each lies in one day, which is either rows or archived (a day's rows and its archive row never
// exist together, so each sample is read once). Each statement first lists the archived days of the
// range (their keys, by the archive table's key, in the statement's own snapshot), then reads:
// - rows: a lookup per segment by the table's key, except for a segment whose day is archived (OFFSET
//   0 keeps each lateral a lookup: pulled up into a join, it was planned as a scan of every row of the
//   sensor's level: seconds);
// - archived days (archive/slices.ts): the segments as pieces grouped by the archive row they read,
//   each archive row found once by its key (only for the days listed) and decompressed once, each
//   piece a slice of its arrays (the archive row decoded whole for every segment took about ten
//   times the plot's time over rows); times come back as epoch milliseconds.

/** The archived days' keys, sorted (float8[]): day in epoch ms (+ level for rollups), in ak.keys. */
const archivedKeys = (table: string, level: boolean, from: string, to: string) =>
  `ak AS MATERIALIZED (SELECT coalesce(array_agg(round(date_part('epoch', day) * 1000)${level ? ' + level' : ''} ORDER BY day${level ? ', level' : ''}), '{}') AS keys
      FROM ${table} WHERE sensor_id = $1 AND day >= to_timestamp(${from} / 1000) AND day < to_timestamp(${to} / 1000))`;
const KEYS = '(SELECT keys FROM ak)';

/**
 * Rollup rows: part, first and last sample, lowest and highest (time, value each). $2–$6 the
 * segments (level, a, b, part, and the key of the archived day a segment of an archived level lies
 * in: day + level), $7–$12 the pieces of archived levels (archive/slices.ts), $13 the part of each
 * piece, $14–$15 the range of days.
 */
const ROLLUPS_SQL = (() => {
  const spec = UNITS.sensor;
  const rows = `SELECT ${ROLLUP_COLUMNS.join(', ')} FROM ${spec.rollupTable}
      WHERE ${spec.idColumn} = $1 AND level = s.level
        AND bucket >= to_timestamp(s.a / 1000) AND bucket < to_timestamp(s.b / 1000)`;
  const slices = rollupSlices(
    'sensor',
    {
      ids: '= $1',
      levels: '$7::int4[]',
      days: '$8::float8[]',
      first: '$9::int4[]',
      count: '$10::int4[]',
      from: '$11::int4[]',
      to: '$12::int4[]',
      keep: archivedKey('k.day + k.level', KEYS),
    },
    ROLLUP_COLUMNS,
  );
  return `WITH ${archivedKeys(rollupDaysTable('sensor'), true, '($14::float8[])[1]', '($15::float8[])[1]')}
    SELECT string_agg(x, ''::bytea) AS nums FROM (
    SELECT ${float8Bytes(['s.part', ...SAMPLES.flatMap(([t, v]) => [ms(`r.${t}`), `r.${v}`])])} AS x
      FROM unnest($2::int4[], $3::float8[], $4::float8[], $5::int4[], $6::float8[]) AS s(level, a, b, part, key)
      CROSS JOIN LATERAL (${rows} OFFSET 0) r
     WHERE NOT ${archivedKey('s.key', KEYS)}
    UNION ALL
    SELECT ${float8Bytes(['($13::int4[])[r.piece]', ...SAMPLES.flatMap(([t, v]) => [`r.${t}`, `r.${v}`])])}
      FROM ${slices} r) q`;
})();
const ROLLUP_WIDTH = 9;

/**
 * Log rows: part, time, value. A lookup (plot-segments.ts) reads the logs of [a, b); those from
 * `split` on belong to the next part. $2–$6 the lookups (split, a, b, part, day), $7–$11 the pieces
 * over archived days (archive/slices.ts), $12 and $13 each piece's split and part, $14–$15 the range
 * of days. Their order does not matter (Extremes keeps the earliest of equal values).
 */
const LOGS_SQL = (() => {
  const spec = KINDS.sensor;
  const rows = `SELECT ts, value FROM ${spec.table}
      WHERE ${spec.idColumn} = $1
        AND ts >= to_timestamp(s.a / 1000) AND ts < to_timestamp(s.b / 1000)`;
  const slices = logSlices(
    'sensor',
    {
      ids: '= $1',
      days: '$7::float8[]',
      first: '$8::int4[]',
      count: '$9::int4[]',
      from: '$10::int4[]',
      to: '$11::int4[]',
      keep: archivedKey('k.day', KEYS),
    },
    ['value'],
  );
  return `WITH ${archivedKeys(daysTable('sensor'), false, '($14::float8[])[1]', '($15::float8[])[1]')}
    SELECT string_agg(x, ''::bytea) AS nums FROM (
    SELECT ${float8Bytes(['CASE WHEN g.ts < to_timestamp(s.split / 1000) THEN s.part ELSE s.part + 1 END', ms('g.ts'), 'g.value'])} AS x
      FROM unnest($2::float8[], $3::float8[], $4::float8[], $5::int4[], $6::float8[]) AS s(split, a, b, part, day)
      CROSS JOIN LATERAL (${rows} OFFSET 0) g
     WHERE NOT ${archivedKey('s.day', KEYS)}
    UNION ALL
    SELECT ${float8Bytes(['CASE WHEN g.t < ($12::float8[])[g.piece] THEN ($13::int4[])[g.piece] ELSE ($13::int4[])[g.piece] + 1 END', 'g.t', 'g.value'])}
      FROM ${slices} g) q`;
})();
const LOG_WIDTH = 3;

const DAY = 86_400_000;
/** Ranges [a, b) (at 1 and 2) cut at UTC days, each piece with the day it lies in (epoch ms). */
function byDay<T extends number[]>(list: T[]): { range: T; day: number }[] {
  const out: { range: T; day: number }[] = [];
  for (const r of list)
    for (const { day, from, to } of utcDays(r[1], r[2])) {
      const piece = [...r] as T;
      piece[1] = from;
      piece[2] = to;
      out.push({ range: piece, day });
    }
  return out;
}

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
  // Rollup segments: those of archived levels cut at days (each with its day's key), days' as they are.
  const rollupSegments = [
    ...segments
      .filter((s) => s[0] > 0 && !archivedLevel(s[0]))
      .map((s) => ({ range: s, key: null })),
    ...byDay(segments.filter((s) => archivedLevel(s[0]))).map(({ range, day }) => ({
      range,
      key: day + range[0],
    })),
  ];
  const archived = rollupSegments.filter((s) => s.key !== null).map((s) => s.range);
  const rollupPieces = cutPieces(
    archived.map(([level, a, b]) => ({ key: level, a, b })),
    (level) => level * 60_000,
  );
  const lookups = byDay(logLookups(segments));
  const logPieces = cutPieces(
    lookups.map(({ range: [, a, b] }) => ({ key: 0, a, b })),
    () => 1,
  );
  const days: Arrays = [
    [[Math.floor(start / DAY) * DAY], 'float8[]'],
    [[end], 'float8[]'],
  ];
  const ranges = rollupSegments.map((s) => s.range);
  const logRanges = lookups.map((l) => l.range);
  const [rollups, logs] = await Promise.all([
    run(
      ROLLUPS_SQL,
      [
        [column(ranges, 0), 'int4[]'],
        [column(ranges, 1), 'float8[]'],
        [column(ranges, 2), 'float8[]'],
        [column(ranges, 3), 'int4[]'],
        [rollupSegments.map((s) => s.key), 'float8[]'],
        ...pieceArrays(rollupPieces, true),
        [rollupPieces.range.map((r) => archived[r][3]), 'int4[]'],
        ...days,
      ],
      rollupSegments.length > 0,
    ),
    run(
      LOGS_SQL,
      [
        [column(logRanges, 0), 'float8[]'],
        [column(logRanges, 1), 'float8[]'],
        [column(logRanges, 2), 'float8[]'],
        [column(logRanges, 3), 'int4[]'],
        [lookups.map((l) => l.day), 'float8[]'],
        ...pieceArrays(logPieces, false),
        [logPieces.range.map((r) => logRanges[r][0]), 'float8[]'],
        [logPieces.range.map((r) => logRanges[r][3]), 'int4[]'],
        ...days,
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
