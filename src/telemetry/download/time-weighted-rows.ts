import type { Format } from '../../export/records.js';
import { mergeUnits } from '../rollups/merge-units.js';
import type { UnitSpec } from '../rollups/unit-columns.js';
import { summaryTail, unescapeSeparators } from './encode-sql.js';
import { float8Bytes, readFloat8 } from './float8-rows.js';
import {
  epochMs,
  bucketOfUnit,
  directLevel,
  TYPED,
  type SummaryRequest,
} from './summary-buckets.js';
import { summaryFieldNames, WEIGHTED } from './summary-fields.js';
import { levelRows, summaryUnits } from './summary-units.js';

// The non-empty buckets of a time-weighted summary request, as the database merges them from the
// event-weighted summaries' units (summary-units.ts) with their historian columns, and as the
// service reads them back.

/** Separator of a line's fields: a control character, which no field's text holds (text goes through to_json or CSV quoting). */
const FIELD = '\x1f';
/** Separator of the lines (chr(30) in bucketLinesSql). */
const LINE = '\x1e';

/**
 * The numbers of a bucket after its start, per integral field in spec.integrals order: the times
 * (epoch ms) and values of its first and last sample in the bucket and its integrals (modes).
 */
function numberColumns(spec: UnitSpec): string[] {
  return spec.integrals.flatMap((field) => [
    epochMs(field.t1),
    field.v1,
    epochMs(field.t2),
    field.v2,
    ...field.modes.map((mode) => `${field.prefix}_${mode}`),
  ]);
}

/**
 * One row per equipment with non-empty buckets, its buckets in bucket order: `nums`, per bucket its
 * start before the cut (epoch ms) and numberColumns, as binary float8 (NaN for none); `lines`, per
 * bucket the element from count on as the event-weighted summaries encode it (summaryTail; id, start
 * and end are written by the service, from the output buckets made once a request) with a FIELD in
 * place of each time-weighted value, joined by chr(30). So the database writes every other field,
 * and the service only reads numbers and puts in the means: numbers as text cost the database a
 * float-to-text conversion each and the client a parse (more than the rest of a page's work), rows
 * of a dozen columns cost the client more to decode than the database takes to make them.
 */
export function bucketLinesSql(
  spec: UnitSpec,
  req: SummaryRequest,
  level: number,
  format: Format,
): string {
  const direct = directLevel(spec, req.interval, level);
  const names = summaryFieldNames(spec.kind);
  const holes = WEIGHTED[spec.kind].map((weighted) => weighted.at);
  const nums = (start: string) => float8Bytes([epochMs(start), ...numberColumns(spec)]);
  const row = (start: string) =>
    `${nums(start)} AS nums, ${summaryTail(spec.kind, format, names, holes)} AS line`;
  const rows = [`SELECT id, grp AS s, ${row('grp')} FROM merged`];
  if (direct) rows.push(`SELECT id, t0 AS s, ${row('t0')} FROM l`);
  // Both aggregates take the rows in the order the sorted subquery gives them (as raw.ts does), so
  // their parts line up; the reader checks that order and sorts where it would not hold.
  return `WITH ${summaryUnits(spec, level, direct)},
    merged AS (${mergeUnits(spec, 'units', bucketOfUnit(req.interval), 'id', true)})
    ${direct ? `, l AS (${levelRows(spec, level)})` : ''}
  SELECT id, string_agg(nums, ''::bytea) AS nums, string_agg(line, chr(30)) AS lines FROM (
    SELECT id, s, nums, line FROM (${rows.join(' UNION ALL ')}) x WHERE ${TYPED} ORDER BY id, s) y
  GROUP BY id ORDER BY id`;
}

/** A row of bucketLinesSql. */
export interface BucketLines {
  id: number;
  nums: Uint8Array;
  lines: string;
}

/** Numbers per bucket and integral field in BucketRows.fields: t1, v1, t2, v2 and the integral. */
export const PER_BUCKET = 5;

/**
 * One equipment's non-empty buckets, decoded: starts (epoch ms), per integral field and bucket its
 * first and last sample and its integral in the field's mode (NaN where the bucket has no sample of
 * it), and each bucket's element text in pieces around the time-weighted values.
 */
export interface BucketRows {
  starts: Float64Array;
  /** Per field: [t1, v1, t2, v2, integral] of each bucket, PER_BUCKET numbers a bucket. */
  fields: Float64Array[];
  /** The elements' texts, as the database joined them. */
  text: string;
  /**
   * Per bucket, where its element's pieces lie in `text`: its start, each hole (a FIELD), its end;
   * holes + 2 offsets a bucket. Pieces are cut from the text as they are written (a split per
   * bucket, and joining the pieces, cost more than everything else the service does per bucket).
   */
  at: Int32Array;
  /** The last piece of each bucket, where it held escaped separators (a pump's status in CSV). */
  unescaped: Map<number, string>;
}

/** Where each line of `text` starts, its holes (FIELD) and its end: holes + 2 offsets a line. */
function findPieces(text: string, holes: number): number[] {
  const found: number[] = [];
  for (let from = 0; ;) {
    found.push(from);
    for (let hole = 0; hole < holes; hole++) {
      const at = text.indexOf(FIELD, from);
      if (at < 0) throw rowsDiffer();
      found.push(at);
      from = at + 1;
    }
    const end = text.indexOf(LINE, from);
    found.push(end < 0 ? text.length : end);
    if (end < 0) return found;
    from = end + 1;
  }
}

const rowsDiffer = () => new Error('time-weighted rows: numbers and lines differ');

/** The rows of one equipment (bucketLinesSql), in bucket order; `modes`: per field, the index of its integral among its modes. */
export function readRows(
  nums: Uint8Array,
  text: string,
  spec: UnitSpec,
  modes: number[],
  holes: number,
): BucketRows {
  const span = holes + 2;
  const found = findPieces(text, holes);
  const count = found.length / span;
  const width = 1 + spec.integrals.reduce((sum, field) => sum + 4 + field.modes.length, 0);
  const values = readFloat8(nums);
  if (values.length !== width * count) throw rowsDiffer();
  const valueAt = (row: number, column: number) => values[width * row + column];
  // Sorted by the database; should a plan ever not keep that order, sorted here.
  let order: number[] | undefined;
  for (let row = 1; row < count && !order; row++)
    if (valueAt(row, 0) <= valueAt(row - 1, 0))
      order = Array.from({ length: count }, (_, index) => index).sort(
        (left, right) => valueAt(left, 0) - valueAt(right, 0),
      );
  // Whether any element holds an escaped separator (unescapeSeparators gives back the same text when none does).
  const escaped = unescapeSeparators(text) !== text;
  const rows: BucketRows = {
    starts: new Float64Array(count),
    fields: spec.integrals.map(() => new Float64Array(PER_BUCKET * count)),
    text,
    at: new Int32Array(span * count),
    unescaped: new Map(),
  };
  for (let bucket = 0; bucket < count; bucket++) {
    const row = order ? order[bucket] : bucket;
    rows.starts[bucket] = valueAt(row, 0);
    const offset = PER_BUCKET * bucket;
    let column = 1;
    for (let field = 0; field < spec.integrals.length; field++) {
      const to = rows.fields[field];
      to[offset] = valueAt(row, column);
      to[offset + 1] = valueAt(row, column + 1);
      to[offset + 2] = valueAt(row, column + 2);
      to[offset + 3] = valueAt(row, column + 3);
      to[offset + 4] = valueAt(row, column + 4 + modes[field]);
      column += 4 + spec.integrals[field].modes.length;
    }
    for (let piece = 0; piece < span; piece++)
      rows.at[span * bucket + piece] = found[span * row + piece];
    // A pump's status in CSV, the one text field, is last: it may hold an escaped separator.
    if (escaped) {
      const last = text.slice(found[span * row + span - 2] + 1, found[span * row + span - 1]);
      const plain = unescapeSeparators(last);
      if (plain !== last) rows.unescaped.set(bucket, plain);
    }
  }
  return rows;
}
