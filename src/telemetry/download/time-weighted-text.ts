import { SEPARATOR, type Format } from '../../export/records.js';
import type { TelemetryKind } from '../kinds.js';
import type { OutputBucket } from './output-buckets.js';
import { summaryFieldNames, WEIGHTED } from './summary-fields.js';
import { PER_BUCKET, type BucketRows } from './time-weighted-rows.js';
import { integralBetween, type Sample } from './value-function.js';

// The text of one equipment's time-weighted summaries (contract 13): the means that the service
// computes from the samples around each bucket, put into the elements the database wrote.

/** One integral field of an equipment around the request: its value function and its samples outside the range. */
export interface FieldSamples {
  stepped: boolean;
  /** The last sample before start, and the first one at or after end. */
  prev: Sample | undefined;
  next: Sample | undefined;
}

/**
 * An element of a bucket with no sample (a gap bucket) in pieces around its time-weighted values,
 * after its id, start and end: count 0, every other field null.
 */
export function gapPieces(kind: TelemetryKind, format: Format): string[] {
  const holes = new Set(WEIGHTED[kind].map((weighted) => weighted.at));
  const pieces = [format === 'json' ? ',"count":0' : ',0'];
  summaryFieldNames(kind)
    .slice(4)
    .forEach((name, at) => {
      const key = format === 'json' ? `,${JSON.stringify(name)}:` : ',';
      if (holes.has(at)) {
        pieces[pieces.length - 1] += key;
        pieces.push('');
      } else pieces[pieces.length - 1] += `${key}${format === 'json' ? 'null' : ''}`;
    });
  if (format === 'json') pieces[pieces.length - 1] += '}';
  return pieces;
}

/** A time-weighted mean as encoded: the shortest text of the number; none as null (JSON) or an empty field (CSV). */
const encodeMean = (mean: number, format: Format): string =>
  Number.isFinite(mean) ? String(mean) : format === 'json' ? 'null' : '';

/** Per bucket, the index of its row in `rows` (-1: none): both are in start order. */
function rowsOfBuckets(buckets: OutputBucket[], rows: BucketRows | undefined): Int32Array {
  const rowOf = new Int32Array(buckets.length).fill(-1);
  if (!rows) return rowOf;
  let row = 0;
  for (let bucket = 0; bucket < buckets.length; bucket++) {
    while (row < rows.starts.length && rows.starts[row] < buckets[bucket].start) row++;
    if (row < rows.starts.length && rows.starts[row] === buckets[bucket].start) rowOf[bucket] = row;
  }
  return rowOf;
}

/** Per bucket, the field's first sample after it (time NaN: none): one pass from the end. */
function samplesAfter(field: FieldSamples, numbers: Float64Array | undefined, rowOf: Int32Array) {
  const times = new Float64Array(rowOf.length);
  const values = new Float64Array(rowOf.length);
  let time = field.next ? field.next.t : NaN;
  let value = field.next ? field.next.v : NaN;
  for (let bucket = rowOf.length - 1; bucket >= 0; bucket--) {
    times[bucket] = time;
    values[bucket] = value;
    const row = rowOf[bucket];
    if (row >= 0 && !Number.isNaN(numbers![PER_BUCKET * row])) {
      time = numbers![PER_BUCKET * row];
      value = numbers![PER_BUCKET * row + 1];
    }
  }
  return { times, values };
}

/**
 * One equipment's elements, as text: walks the buckets with the samples around each (contract 13)
 * and puts the time-weighted means into the elements the database wrote, or into a gap bucket's
 * element (`gap`: gapPieces). Built by concatenation, flattened every CHUNK elements (see flat).
 */
export function summarize(
  kind: TelemetryKind,
  id: number,
  format: Format,
  buckets: OutputBucket[],
  rows: BucketRows | undefined,
  fields: FieldSamples[],
  gap: string[],
): string {
  const rowOf = rowsOfBuckets(buckets, rows);
  const after = fields.map((field, index) => samplesAfter(field, rows?.fields[index], rowOf));
  const weighted = WEIGHTED[kind];
  const prevs = fields.map((field) => field.prev);
  const means = new Float64Array(fields.length);
  const separator = SEPARATOR[format];
  const open = format === 'json' ? `{${JSON.stringify(summaryFieldNames(kind)[0])}:${id}` : `${id}`;
  const span = weighted.length + 2;
  let out = '';
  let chunk = '';
  let inChunk = 0;
  for (let bucket = 0; bucket < buckets.length; bucket++) {
    const { from, to } = buckets[bucket];
    const row = rowOf[bucket];
    let covered = false;
    for (let index = 0; index < fields.length; index++) {
      const { stepped } = fields[index];
      const prev = prevs[index];
      const nextTime = after[index].times[bucket];
      const next = Number.isNaN(nextTime)
        ? undefined
        : { t: nextTime, v: after[index].values[bucket] };
      let integral = 0;
      let length = 0;
      const numbers = rows?.fields[index];
      const firstTime = row >= 0 ? numbers![PER_BUCKET * row] : NaN;
      if (!Number.isNaN(firstTime)) {
        const first = { t: firstTime, v: numbers![PER_BUCKET * row + 1] };
        const last = { t: numbers![PER_BUCKET * row + 2], v: numbers![PER_BUCKET * row + 3] };
        const inner = numbers![PER_BUCKET * row + 4];
        integral = Number.isNaN(inner) ? 0 : inner;
        length = (last.t - first.t) / 1000;
        if (prev) {
          integral += integralBetween(prev, first, from, first.t, stepped);
          length += (first.t - from) / 1000;
        }
        if (next) {
          integral += integralBetween(last, next, last.t, to, stepped);
          length += (to - last.t) / 1000;
        }
        prevs[index] = last;
      } else if (prev && next) {
        integral = integralBetween(prev, next, from, to, stepped);
        length = (to - from) / 1000;
      }
      if (length > 0) covered = true;
      means[index] = length > 0 ? integral / length : NaN;
    }
    if (row < 0 && !covered) continue;
    if (out.length || chunk.length) chunk += separator;
    chunk += open + buckets[bucket][format];
    for (let piece = 0; piece <= weighted.length; piece++) {
      if (piece) {
        const { scale, slot } = weighted[piece - 1];
        chunk += encodeMean(scale * means[slot], format);
      }
      if (row < 0) chunk += gap[piece];
      else if (piece === weighted.length && rows!.unescaped.has(row))
        chunk += rows!.unescaped.get(row)!;
      else
        chunk += rows!.text.slice(
          rows!.at[span * row + piece] + (piece ? 1 : 0),
          rows!.at[span * row + piece + 1],
        );
    }
    if (++inChunk === CHUNK) {
      out += flat(chunk);
      chunk = '';
      inChunk = 0;
    }
  }
  return out + chunk;
}

/** Elements concatenated before their text is made flat (see flat). */
const CHUNK = 256;

/**
 * The text of a concatenation made flat, one copy: a few hundred elements' pieces then become one
 * string young, instead of a tree of thousands of pieces that lives until the page is joined (the
 * garbage collector's largest cost in a year of hours). Reading a character flattens it in V8.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}
