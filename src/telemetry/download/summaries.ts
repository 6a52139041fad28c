import type { Queryable } from '../../db/index.js';
import type { Format } from '../../export/records.js';
import type { TelemetryKind } from '../kinds.js';
import { mergeUnits } from '../rollups/merge-units.js';
import type { UnitSpec } from '../rollups/unit-columns.js';
import { UNITS } from '../rollups/units.js';
import { SQL_SEPARATOR, summaryLine } from './encode-sql.js';
import {
  BUCKET,
  bucketOfUnit,
  directLevel,
  summaryParams,
  TYPED,
  type Interval,
  type SummaryRequest,
} from './summary-buckets.js';
import { summaryFieldNames } from './summary-fields.js';
import { levelRows, summaryUnits } from './summary-units.js';

// Event-weighted summary downloads (contract 6). The range [start, end) is covered by units, each
// inside one output bucket (summary-units.ts: rollups of the coarsest level whose buckets nest in the
// output buckets where they are clean, finer rollups and logs elsewhere), merged per equipment and
// output bucket (rollups/merge-units.ts), so the answer equals a plain aggregation of the logs
// whatever the refresher has done so far.

/**
 * One row per equipment with summaries: its id and the text of its summaries in bucket order, encoded
 * in `format`. Level rows that are output buckets by themselves (see directLevel) are encoded as they
 * are; everything else is merged per equipment and output bucket first.
 */
function summarySql(spec: UnitSpec, interval: Interval, level: number, format: Format): string {
  const direct = directLevel(spec, interval, level);
  const names = summaryFieldNames(spec.kind);
  const merged = summaryLine(
    spec.kind,
    format,
    names,
    'greatest(grp, $2::timestamptz)',
    `least(${BUCKET[interval].end}, $3::timestamptz)`,
  );
  const lines = [`SELECT id, grp AS s, ${merged} AS line FROM merged`];
  if (direct) {
    const own = summaryLine(spec.kind, format, names, 't0', `t0 + interval '${level} minutes'`);
    lines.push(`SELECT id, t0 AS s, ${own} AS line FROM l`);
  }
  return `WITH ${summaryUnits(spec, level, direct)},
    merged AS (${mergeUnits(spec, 'units', bucketOfUnit(interval), 'id', false)}),
    ${direct ? `l AS (${levelRows(spec, level)}),` : ''}
    lines AS (${lines.join('\n  UNION ALL\n  ')})
  SELECT id, string_agg(line, ${SQL_SEPARATOR[format]} ORDER BY s) AS text FROM lines WHERE ${TYPED} GROUP BY id ORDER BY id`;
}

/** The encoded summaries of one equipment, in bucket order. */
export interface EquipmentSummaries {
  id: number;
  text: string;
}

/** The summaries of one group of ids sharing a zone, in id then bucket order; no entry for an id without data. */
export async function querySummaries(
  db: Queryable,
  kind: TelemetryKind,
  req: SummaryRequest,
  format: Format,
): Promise<EquipmentSummaries[]> {
  const spec = UNITS[kind];
  const { level, params } = summaryParams(req);
  // indexOrder: every rollup row and mark is then looked up by its key. Without statistics the check
  // that a rollup row has no mark was planned as a bitmap scan of all the marks of the kind for every
  // row: rows × marks.
  return db.query<EquipmentSummaries>(summarySql(spec, req.interval, level, format), params, {
    indexOrder: true,
  });
}
