import type { Queryable } from '../../db/index.js';
import { SEPARATOR, type Format } from '../../export/records.js';
import type { TelemetryKind } from '../kinds.js';
import { mergeUnits } from '../rollups/merge-units.js';
import type { IntegralField, UnitSpec } from '../rollups/unit-columns.js';
import { EPOCH, UNITS } from '../rollups/units.js';
import {
  BUCKET,
  directLevel,
  levelRows,
  summaryFieldNames,
  summaryParams,
  summaryUnits,
  TYPED,
  type SummaryRequest,
} from './summaries.js';
import { summaryTail, unescapeSeparators } from './encode-sql.js';
import { float8Bytes, readFloat8 } from './float8-rows.js';
import { integralBetween, type Sample } from './value-function.js';
import { isoTime } from '../../time.js';
import { zoneAlignment } from './zones.js';

// Time-weighted summaries (contract 13). The units of each output bucket are those of the
// event-weighted summaries (summaries.ts: rollups where clean, logs of stale quarters and of the cut
// edges), merged with their historian columns: per averaged field, the first and last sample of the
// bucket and the integral between them (links between the bucket's units included, units.ts). What
// lies between a bucket's first sample and the last sample before it (or its last and the next
// one) is added here from those neighbours: the previous and next non-empty buckets, or one
// indexed lookup before start and after end. So a request reads no more logs than the
// event-weighted one, plus two rows per equipment and field, and buckets between samples (gap
// buckets) get elements with count 0.

/**
 * Per kind, the DTO fields that are time-weighted (contract 13), in DTO order: their position among
 * the fields after count and the integral field (units.ts) they average (runningPercent: × 100).
 * Every other field is the event-weighted summary's own.
 */
const WEIGHTED: Record<TelemetryKind, { at: number; prefix: string; scale: number }[]> = {
  sensor: [{ at: 2, prefix: 'v', scale: 1 }],
  meter: [
    { at: 2, prefix: 'fr', scale: 1 },
    { at: 4, prefix: 'p', scale: 1 },
  ],
  pump: [
    { at: 0, prefix: 'r', scale: 100 },
    { at: 1, prefix: 'f', scale: 1 },
    { at: 2, prefix: 'p', scale: 1 },
  ],
  tank: [
    { at: 2, prefix: 'e', scale: 1 },
    { at: 5, prefix: 'x', scale: 1 },
  ],
};

const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;

/** Separator of a line's fields: a control character, which no field's text holds (text goes through to_json or CSV quoting). */
const FIELD = '\x1f';
/** Separator of the lines (chr(30) in bucketLinesSql). */
const LINE = '\x1e';

/**
 * The numbers of a bucket after its start, per integral field in spec.integrals order: the times
 * (epoch ms) and values of its first and last sample in the bucket and its integrals (modes).
 */
function numberColumns(spec: UnitSpec): string[] {
  return spec.integrals.flatMap((f) => [
    ms(f.t1),
    f.v1,
    ms(f.t2),
    f.v2,
    ...f.modes.map((m) => `${f.prefix}_${m}`),
  ]);
}

/**
 * One row per equipment with non-empty buckets, its buckets in bucket order: `nums`, per bucket its
 * start before the cut (epoch ms) and numberColumns, as binary float8 (NaN for none); `lines`, per
 * bucket the element from count on as the event-weighted summaries encode it (summaryTail; id, start
 * and end are written here, from the buckets' times made once a request) with a FIELD in place of
 * each time-weighted value, joined by chr(30). So the database writes every other field, and the
 * service only reads numbers and puts in the means: numbers as text cost the database a
 * float-to-text conversion each and the client a parse (more than the rest of a page's work), rows
 * of a dozen columns cost the client more to decode than the database takes to make them.
 */
function bucketLinesSql(
  spec: UnitSpec,
  req: SummaryRequest,
  level: number,
  format: Format,
): string {
  const direct = directLevel(spec, req.interval, level);
  const bucket = BUCKET[req.interval];
  const group = `CASE WHEN t0 = '-infinity' THEN NULL ELSE ${bucket.start} END`;
  const names = summaryFieldNames(spec.kind);
  const holes = WEIGHTED[spec.kind].map((w) => w.at);
  const nums = (t: string) => float8Bytes([ms(t), ...numberColumns(spec)]);
  const row = (t: string) =>
    `${nums(t)} AS nums, ${summaryTail(spec.kind, format, names, holes)} AS line`;
  const rows = [`SELECT id, grp AS s, ${row('grp')} FROM merged`];
  if (direct) rows.push(`SELECT id, t0 AS s, ${row('t0')} FROM l`);
  // Both aggregates take the rows in the order the sorted subquery gives them (as raw.ts does), so
  // their parts line up; the reader checks that order and sorts where it would not hold.
  return `WITH ${summaryUnits(spec, level, direct)},
    merged AS (${mergeUnits(spec, 'units', group, 'id', true)})
    ${direct ? `, l AS (${levelRows(spec, level)})` : ''}
  SELECT id, string_agg(nums, ''::bytea) AS nums, string_agg(line, chr(30)) AS lines FROM (
    SELECT id, s, nums, line FROM (${rows.join(' UNION ALL ')}) x WHERE ${TYPED} ORDER BY id, s) y
  GROUP BY id ORDER BY id`;
}

/** A row of bucketLinesSql. */
interface BucketLines {
  id: number;
  nums: Uint8Array;
  lines: string;
}

/**
 * One equipment's non-empty buckets, decoded: starts (epoch ms), per integral field and bucket its
 * first and last sample and its integral in the field's mode (NaN where the bucket has no sample of
 * it), and each bucket's element text in pieces around the time-weighted values.
 */
interface BucketRows {
  s: Float64Array;
  /** Per field: [t1, v1, t2, v2, integral] of each bucket, five numbers a bucket. */
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

/** The rows of one equipment (bucketLinesSql), in bucket order; `modes`: per field, the index of its integral among its modes. */
function readRows(
  nums: Uint8Array,
  text: string,
  spec: UnitSpec,
  modes: number[],
  holes: number,
): BucketRows {
  // Where each line starts, and its holes: LINE separates lines, FIELD marks a hole.
  const span = holes + 2;
  const found: number[] = [];
  const differ = () => new Error('time-weighted rows: numbers and lines differ');
  for (let from = 0; ;) {
    found.push(from);
    for (let h = 0; h < holes; h++) {
      const hole = text.indexOf(FIELD, from);
      if (hole < 0) throw differ();
      found.push(hole);
      from = hole + 1;
    }
    const end = text.indexOf(LINE, from);
    found.push(end < 0 ? text.length : end);
    if (end < 0) break;
    from = end + 1;
  }
  const n = found.length / span;
  const width = 1 + spec.integrals.reduce((w, f) => w + 4 + f.modes.length, 0);
  const values = readFloat8(nums);
  if (values.length !== width * n) throw differ();
  const at = (i: number, k: number) => values[width * i + k];
  // Sorted by the database; should a plan ever not keep that order, sorted here.
  let order: number[] | undefined;
  for (let i = 1; i < n && !order; i++)
    if (at(i, 0) <= at(i - 1, 0))
      order = Array.from({ length: n }, (_, j) => j).sort((x, y) => at(x, 0) - at(y, 0));
  // Whether any element holds an escaped separator (unescapeSeparators gives back the same text when none does).
  const escaped = unescapeSeparators(text) !== text;
  const out: BucketRows = {
    s: new Float64Array(n),
    fields: spec.integrals.map(() => new Float64Array(5 * n)),
    text,
    at: new Int32Array(span * n),
    unescaped: new Map(),
  };
  for (let o = 0; o < n; o++) {
    const i = order ? order[o] : o;
    out.s[o] = at(i, 0);
    let k = 1;
    for (let j = 0; j < spec.integrals.length; j++) {
      const to = out.fields[j];
      to[5 * o] = at(i, k);
      to[5 * o + 1] = at(i, k + 1);
      to[5 * o + 2] = at(i, k + 2);
      to[5 * o + 3] = at(i, k + 3);
      to[5 * o + 4] = at(i, k + 4 + modes[j]);
      k += 4 + spec.integrals[j].modes.length;
    }
    for (let h = 0; h < span; h++) out.at[span * o + h] = found[span * i + h];
    // A pump's status in CSV, the one text field, is last: it may hold an escaped separator.
    if (escaped) {
      const last = text.slice(found[span * i + span - 2] + 1, found[span * i + span - 1]);
      const plain = unescapeSeparators(last);
      if (plain !== last) out.unescaped.set(o, plain);
    }
  }
  return out;
}

/**
 * The buckets of [start, end) on the zone's clock: [s, a, b] with s the bucket's start before the cut
 * and [a, b) after it. Every bucket holds one instant of a lattice finer than the shortest bucket
 * (quarters; hours for days, which last at least 23 h), plus start and the last millisecond for the
 * cut ones; the database maps each to its bucket as it does for the units.
 */
function bucketsSql(req: SummaryRequest): string {
  const step = req.interval === '1d' ? '1 hour' : '15 minutes';
  const b = BUCKET[req.interval];
  return `SELECT ${ms('grp')} AS s, ${ms('greatest(grp, $2::timestamptz)')} AS a, ${ms(`least(${b.end}, $3::timestamptz)`)} AS b
    FROM (SELECT DISTINCT ${b.start} AS grp FROM (
      SELECT $2::timestamptz AS t0 UNION ALL SELECT $3::timestamptz - interval '1 millisecond'
      UNION ALL SELECT generate_series(date_bin('${step}', $2::timestamptz, ${EPOCH}) + interval '${step}', $3::timestamptz, interval '${step}')) c
      WHERE t0 < $3::timestamptz) x
    WHERE $1::int IS NULL AND $4::text IS NOT NULL ORDER BY grp`;
}

/** Each equipment's last sample of each field before start and first one at or after end: one indexed row each. */
function edgesSql(spec: UnitSpec): string {
  const { logTable, idColumn: idc } = spec;
  const value: Record<string, string> = {
    v: 'value',
    fr: 'flow_rate',
    p: 'pressure',
    r: 'running::int::float8',
    f: 'frequency',
    e: 'entry_tank_level',
    x: 'exit_tank_level',
  };
  const field = (p: string) => value[p].split('::')[0];
  const cols = spec.integrals.flatMap(({ prefix: p }) => [
    `(SELECT ARRAY[${ms('ts')}, ${value[p]}] FROM ${logTable} g WHERE g.${idc} = i.id AND g.ts < $2::timestamptz
        AND g.${field(p)} IS NOT NULL ORDER BY g.ts DESC LIMIT 1) AS ${p}__prev`,
    `(SELECT ARRAY[${ms('ts')}, ${value[p]}] FROM ${logTable} g WHERE g.${idc} = i.id AND g.ts >= $3::timestamptz
        AND g.${field(p)} IS NOT NULL ORDER BY g.ts LIMIT 1) AS ${p}__next`,
  ]);
  // A sensor's interpolation mode comes along (one statement fewer per request).
  const step =
    spec.kind === 'sensor'
      ? `(SELECT step FROM sensors WHERE sensor_id = i.id) AS step`
      : 'NULL::boolean AS step';
  return `SELECT i.id, ${step}, ${cols.join(', ')} FROM unnest($1::int[]) AS i(id) ORDER BY i.id`;
}

const WIDTH_MS = { '15m': 15 * 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;

/**
 * The buckets computed here where the zone's clock lines up with them over the whole range (UTC
 * quarters, hours and days): the same instants the database gives, without asking it.
 */
function alignedBuckets(req: SummaryRequest): { s: number; a: number; b: number }[] | undefined {
  if (req.interval === 'all') return [{ s: req.start, a: req.start, b: req.end }];
  const align = zoneAlignment(req.zone, req.start, req.end);
  const fits =
    req.interval === '15m'
      ? align !== 'none'
      : req.interval === '1h'
        ? align === 'utc' || align === 'hour'
        : align === 'utc';
  if (!fits) return undefined;
  const w = WIDTH_MS[req.interval];
  const out: { s: number; a: number; b: number }[] = [];
  for (let s = Math.floor(req.start / w) * w; s < req.end; s += w)
    out.push({ s, a: Math.max(s, req.start), b: Math.min(s + w, req.end) });
  return out;
}

export interface TimeWeightedSummaries {
  id: number;
  /** The encoded elements (as export/records.ts writes them), joined by SEPARATOR[format]. */
  text: string;
}

/**
 * The buckets of the latest request: a request's pages (a few equipment each) share them, and a year
 * of hours is 8,760 of them, each with its times as text. Read only, never changed once made.
 */
let lastBuckets: { key: string; list: Bucket[] } | undefined;

/** The time-weighted summaries of one group of ids sharing a zone, by id then bucket. */
export async function queryTimeWeighted(
  db: Queryable,
  kind: TelemetryKind,
  req: SummaryRequest,
  format: Format = 'json',
): Promise<TimeWeightedSummaries[]> {
  const spec = UNITS[kind];
  const { level, params } = summaryParams(req);
  const bucketKey = `${req.start} ${req.end} ${req.interval} ${req.zone}`;
  const known = lastBuckets?.key === bucketKey ? lastBuckets.list : undefined;
  const [rows, buckets, edges] = await Promise.all([
    db.query<BucketLines>(bucketLinesSql(spec, req, level, format), params, { indexOrder: true }),
    known ??
      alignedBuckets(req) ??
      db.query<{ s: number; a: number; b: number }>(bucketsSql(req), [null, ...params.slice(1, 4)]),
    db.query<Record<string, number | number[] | boolean | null>>(
      edgesSql(spec),
      params.slice(0, 3),
      { indexOrder: true },
    ),
  ]);
  const bucketList: Bucket[] =
    known ??
    buckets.map((x) => {
      const aIso = isoTime(Number(x.a));
      const bIso = isoTime(Number(x.b));
      return {
        s: Number(x.s),
        a: Number(x.a),
        b: Number(x.b),
        aIso,
        bIso,
        json: `,"start":"${aIso}","end":"${bIso}"`,
        csv: `,${aIso},${bIso}`,
      };
    });
  lastBuckets = { key: bucketKey, list: bucketList };
  const gap = gapPieces(kind, format);
  const rowsOf = new Map(rows.map((r) => [Number(r.id), r]));
  const out: TimeWeightedSummaries[] = [];
  for (const edge of edges) {
    const id = Number(edge.id);
    const fields = spec.integrals.map((f) => ({
      f,
      stepped: f.modes.length === 1 ? f.modes[0] === 'is' : edge.step === true,
      prev: sample(edge[`${f.prefix}__prev`]),
      next: sample(edge[`${f.prefix}__next`]),
    }));
    const modes = fields.map(({ f, stepped }) => f.modes.indexOf(stepped ? 'is' : 'il'));
    const r = rowsOf.get(id);
    const bucketRows = r
      ? readRows(r.nums, r.lines, spec, modes, WEIGHTED[kind].length)
      : undefined;
    const text = summarize(kind, id, format, bucketList, bucketRows, fields, gap);
    if (text.length) out.push({ id, text });
  }
  return out;
}

const sample = (x: unknown): Sample | undefined =>
  Array.isArray(x) ? { t: Number(x[0]), v: Number(x[1]) } : undefined;

interface Bucket {
  s: number;
  a: number;
  b: number;
  aIso: string;
  bIso: string;
  /** An element's text between its id and count, per format. */
  json: string;
  csv: string;
}

/**
 * An element of a bucket with no sample (a gap bucket) in pieces around its time-weighted values,
 * after its id, start and end: count 0, every other field null.
 */
function gapPieces(kind: TelemetryKind, format: Format): string[] {
  const holes = new Set(WEIGHTED[kind].map((w) => w.at));
  const pieces = [format === 'json' ? ',"count":0' : ',0'];
  summaryFieldNames(kind)
    .slice(4)
    .forEach((name, i) => {
      const key = format === 'json' ? `,${JSON.stringify(name)}:` : ',';
      if (holes.has(i)) {
        pieces[pieces.length - 1] += key;
        pieces.push('');
      } else pieces[pieces.length - 1] += `${key}${format === 'json' ? 'null' : ''}`;
    });
  if (format === 'json') pieces[pieces.length - 1] += '}';
  return pieces;
}

/** A time-weighted mean as encoded: the shortest text of the number; none as null (JSON) or an empty field (CSV). */
const encodeMean = (v: number, format: Format): string =>
  Number.isFinite(v) ? String(v) : format === 'json' ? 'null' : '';

interface FieldState {
  f: IntegralField;
  stepped: boolean;
  prev: Sample | undefined;
  next: Sample | undefined;
}

/**
 * One equipment's elements, as text: walks the buckets with the samples around each (contract 13)
 * and puts the time-weighted means into the elements the database wrote, or into a gap bucket's
 * element. Built by concatenation, flattened every CHUNK elements (see flat).
 */
function summarize(
  kind: TelemetryKind,
  id: number,
  format: Format,
  buckets: Bucket[],
  rows: BucketRows | undefined,
  fields: FieldState[],
  gap: string[],
): string {
  const n = buckets.length;
  // The row of each bucket (-1: none).
  const rowAt = new Int32Array(n).fill(-1);
  if (rows) {
    let j = 0;
    for (let i = 0; i < n; i++) {
      while (j < rows.s.length && rows.s[j] < buckets[i].s) j++;
      if (j < rows.s.length && rows.s[j] === buckets[i].s) rowAt[i] = j;
    }
  }
  // Per field, the first sample after each bucket (time NaN: none): one pass from the end.
  const nextAt = fields.map((st, k) => {
    const t = new Float64Array(n);
    const v = new Float64Array(n);
    let nt = st.next ? st.next.t : NaN;
    let nv = st.next ? st.next.v : NaN;
    const at = rows?.fields[k];
    for (let i = n - 1; i >= 0; i--) {
      t[i] = nt;
      v[i] = nv;
      const r = rowAt[i];
      if (r >= 0 && !Number.isNaN(at![5 * r])) {
        nt = at![5 * r];
        nv = at![5 * r + 1];
      }
    }
    return { t, v };
  });
  const weighted = WEIGHTED[kind];
  const slot = weighted.map((w) => fields.findIndex((st) => st.f.prefix === w.prefix));
  const prevs = fields.map((st) => st.prev);
  const means = new Float64Array(fields.length);
  const separator = SEPARATOR[format];
  const open = format === 'json' ? `{${JSON.stringify(summaryFieldNames(kind)[0])}:${id}` : `${id}`;
  const span = weighted.length + 2;
  let out = '';
  let chunk = '';
  let inChunk = 0;
  for (let i = 0; i < n; i++) {
    const { a, b } = buckets[i];
    const r = rowAt[i];
    let covered = false;
    for (let k = 0; k < fields.length; k++) {
      const st = fields[k];
      const prev = prevs[k];
      const nt = nextAt[k].t[i];
      const next = Number.isNaN(nt) ? undefined : { t: nt, v: nextAt[k].v[i] };
      let integral = 0;
      let length = 0;
      const at = rows?.fields[k];
      const t1 = r >= 0 ? at![5 * r] : NaN;
      if (!Number.isNaN(t1)) {
        const first = { t: t1, v: at![5 * r + 1] };
        const last = { t: at![5 * r + 2], v: at![5 * r + 3] };
        const inner = at![5 * r + 4];
        integral = Number.isNaN(inner) ? 0 : inner;
        length = (last.t - first.t) / 1000;
        if (prev) {
          integral += integralBetween(prev, first, a, first.t, st.stepped);
          length += (first.t - a) / 1000;
        }
        if (next) {
          integral += integralBetween(last, next, last.t, b, st.stepped);
          length += (b - last.t) / 1000;
        }
        prevs[k] = last;
      } else if (prev && next) {
        integral = integralBetween(prev, next, a, b, st.stepped);
        length = (b - a) / 1000;
      }
      if (length > 0) covered = true;
      means[k] = length > 0 ? integral / length : NaN;
    }
    if (r < 0 && !covered) continue;
    if (out.length || chunk.length) chunk += separator;
    chunk += open + buckets[i][format];
    for (let w = 0; w <= weighted.length; w++) {
      if (w) chunk += encodeMean(weighted[w - 1].scale * means[slot[w - 1]], format);
      if (r < 0) chunk += gap[w];
      else if (w === weighted.length && rows!.unescaped.has(r)) chunk += rows!.unescaped.get(r)!;
      else
        chunk += rows!.text.slice(rows!.at[span * r + w] + (w ? 1 : 0), rows!.at[span * r + w + 1]);
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
