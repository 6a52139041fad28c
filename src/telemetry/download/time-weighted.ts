import type { Queryable } from '../../db/index.js';
import { EQUIPMENT } from '../../equipment.js';
import type { Format } from '../../export/records.js';
import { nearestLog } from '../archive/days.js';
import type { TelemetryKind } from '../kinds.js';
import type { IntegralField, UnitSpec } from '../rollups/unit-columns.js';
import { UNITS } from '../rollups/units.js';
import { outputBuckets, type SharedBuckets } from './output-buckets.js';
import { epochMs, summaryParams, type SummaryRequest } from './summary-buckets.js';
import { WEIGHTED } from './summary-fields.js';
import { gapPieces, summarize, type FieldSamples } from './time-weighted-text.js';
import { bucketLinesSql, readRows, type BucketLines } from './time-weighted-rows.js';
import type { Sample } from './value-function.js';

// Time-weighted summaries (contract 13). The units of each output bucket are those of the
// event-weighted summaries (summary-units.ts: rollups where clean, logs of stale quarters and of the
// cut edges), merged with their historian columns: per averaged field, the first and last sample of
// the bucket and the integral between them (links between the bucket's units included,
// rollups/merge-units.ts). What lies between a bucket's first sample and the last sample before it
// (or its last and the next one) is added here from those neighbours: the previous and next
// non-empty buckets, or one indexed lookup before start and after end. So a request reads no more
// logs than the event-weighted one, plus two rows per equipment and field, and buckets between
// samples (gap buckets) get elements with count 0.

/**
 * Each equipment's last sample of each field before start and first one at or after end, among its
 * rows and its archived days (archive/days.ts nearestLog): one indexed row each, and where the rows
 * hold none on that side, the nearest archived day that holds one, decoded.
 */
function edgesSql(spec: UnitSpec): string {
  const sampleOf = ({ column, value }: IntegralField, t: string, side: 'before' | 'after') =>
    nearestLog(spec.kind, 'i.id', t, side, column, `ARRAY[${epochMs('g.ts')}, ${value}]`);
  const cols = spec.integrals.flatMap((field) => [
    `${sampleOf(field, '$2::timestamptz', 'before')} AS ${field.prefix}__prev`,
    `${sampleOf(field, '$3::timestamptz', 'after')} AS ${field.prefix}__next`,
  ]);
  // A sensor's interpolation mode comes along (one statement fewer per request).
  const { table, idColumn } = EQUIPMENT[spec.kind];
  const step =
    spec.kind === 'sensor'
      ? `(SELECT step FROM ${table} WHERE ${idColumn} = i.id) AS step`
      : 'NULL::boolean AS step';
  return `SELECT i.id, ${step}, ${cols.join(', ')} FROM unnest($1::int[]) AS i(id) ORDER BY i.id`;
}

/** A row of edgesSql. */
type Edges = Record<string, number | number[] | boolean | null>;

const sample = (edge: unknown): Sample | undefined =>
  Array.isArray(edge) ? { t: Number(edge[0]), v: Number(edge[1]) } : undefined;

export interface TimeWeightedSummaries {
  id: number;
  /** The encoded elements (as export/records.ts writes them), joined by SEPARATOR[format]. */
  text: string;
}

/**
 * The time-weighted summaries of one group of ids sharing a zone, by id then bucket. `shared`: the
 * output buckets of the request, made by its first page for the others.
 */
export async function queryTimeWeighted(
  db: Queryable,
  kind: TelemetryKind,
  req: SummaryRequest,
  format: Format = 'json',
  shared: SharedBuckets = new Map(),
): Promise<TimeWeightedSummaries[]> {
  const spec = UNITS[kind];
  const { level, params } = summaryParams(req);
  const [rows, buckets, edges] = await Promise.all([
    db.query<BucketLines>(bucketLinesSql(spec, req, level, format), params, { indexOrder: true }),
    outputBuckets(db, req, params, shared),
    db.query<Edges>(edgesSql(spec), params.slice(0, 3), { indexOrder: true }),
  ]);
  const gap = gapPieces(kind, format);
  const rowsOf = new Map(rows.map((row) => [Number(row.id), row]));
  const summaries: TimeWeightedSummaries[] = [];
  for (const edge of edges) {
    const id = Number(edge.id);
    const fields: FieldSamples[] = spec.integrals.map((field) => ({
      stepped: field.modes.length === 1 ? field.modes[0] === 'is' : edge.step === true,
      prev: sample(edge[`${field.prefix}__prev`]),
      next: sample(edge[`${field.prefix}__next`]),
    }));
    const modes = spec.integrals.map((field, index) =>
      field.modes.indexOf(fields[index].stepped ? 'is' : 'il'),
    );
    const row = rowsOf.get(id);
    const bucketRows = row
      ? readRows(row.nums, row.lines, spec, modes, WEIGHTED[kind].length)
      : undefined;
    const text = summarize(kind, id, format, buckets, bucketRows, fields, gap);
    if (text.length) summaries.push({ id, text });
  }
  return summaries;
}
