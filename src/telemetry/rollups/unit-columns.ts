import type { TelemetryKind } from '../kinds.js';

// The form of a unit (units.ts) and the builders of its columns: each column with the SQL that makes
// it from a log row (alias g) and the aggregate that merges units (columns of the relation being
// grouped).

export interface UnitColumn {
  name: string;
  type: string;
  /** Value for a single log row `g`. */
  raw: string;
  /** Aggregate over the grouped units. */
  merge: string;
  /** Historian column (contract 13): merged only when asked for (see mergeUnits). */
  historian?: boolean;
}

export type IntegralMode = 'is' | 'il';

/**
 * A field whose time integral the unit carries (contract 13): its first and last sample inside the
 * unit (t1, v1, t2, v2: column names) and the integral of its value function between them, stepped
 * (`is`) and/or linear (`il`), in value × seconds. Merging adds the link between neighbouring units
 * that carry the field: stepped, the earlier unit's last value × the gap; linear, the trapezoid.
 */
export interface IntegralField {
  prefix: string;
  t1: string;
  v1: string;
  t2: string;
  v2: string;
  /** Integral columns stored: stepped, linear or both. */
  modes: IntegralMode[];
  /** The field is never null in a unit (sensors): no partition by presence needed. */
  always: boolean;
  /** The log column sampled (kinds.ts), and its value as float8 for a log row `g`. */
  column: string;
  value: string;
}

export interface UnitSpec {
  kind: TelemetryKind;
  /** The kind's code in rollup_dirty (the equipment registry's). */
  code: number;
  logTable: string;
  idColumn: string;
  rollupTable: string;
  /** Meters: the volume chain (tv_first, tv_last, tv_inner) is linked across unit edges. */
  chain: boolean;
  columns: UnitColumn[];
  integrals: IntegralField[];
}

export const col = (name: string, type: string, raw: string, merge: string): UnitColumn => ({
  name,
  type,
  raw,
  merge,
});

/** The value of the unit's earliest sample. */
export const firstBy = (column: string) => `(array_agg(${column} ORDER BY first_ts))[1]`;
/** The value of the unit's latest sample. */
export const latest = (column: string) => `(array_agg(${column} ORDER BY last_ts DESC))[1]`;
/** The value of the first unit by `orderBy` among those where `present` is not null. */
export const presentValue = (column: string, orderBy: string, present: string) =>
  `(array_agg(${column} ORDER BY ${orderBy}) FILTER (WHERE ${present} IS NOT NULL))[1]`;

/** How many samples of the unit carry the log field. */
export const presentCount = (name: string, field: string) =>
  col(name, 'int4', `(g.${field} IS NOT NULL)::int`, `sum(${name})::int`);

/** The statistics `which` of a log field, and its count (`<prefix>_n`). */
export const stat = (prefix: string, field: string, which: ('min' | 'max' | 'sum')[]) => [
  ...which.map((aggregate) =>
    col(`${prefix}_${aggregate}`, 'float8', `g.${field}`, `${aggregate}(${prefix}_${aggregate})`),
  ),
  presentCount(`${prefix}_n`, field),
];

/** Columns every unit has. */
export const COMMON = [
  col('count', 'int4', '1', 'sum(count)::int'),
  col('first_ts', 'timestamptz', 'g.ts', 'min(first_ts)'),
  col('last_ts', 'timestamptz', 'g.ts', 'max(last_ts)'),
];

export const historianCol = (name: string, type: string, raw: string, merge: string) => ({
  ...col(name, type, raw, merge),
  historian: true,
});

/** A field's integral columns: 0 for a single sample (`present`: SQL, whether it has one), summed with their links when merged. */
export const integralCols = (prefix: string, modes: IntegralMode[], present: string) =>
  modes.map((mode) =>
    historianCol(
      `${prefix}_${mode}`,
      'float8',
      `CASE WHEN ${present} THEN 0::float8 END`,
      `sum(${prefix}_${mode} + ${prefix}_l${mode[1]})`,
    ),
  );

/** A nullable field with its own first and last sample columns. */
export const integral = (
  prefix: string,
  value: string,
  column: string,
  modes: IntegralMode[],
): [IntegralField, UnitColumn[]] => {
  const present = `g.${column} IS NOT NULL`;
  const [t1, v1, t2, v2] = ['t1', 'v1', 't2', 'v2'].map((part) => `${prefix}_${part}`);
  const field = { prefix, t1, v1, t2, v2, modes, always: false, column, value };
  return [
    field,
    [
      historianCol(t1, 'timestamptz', `CASE WHEN ${present} THEN g.ts END`, `min(${t1})`),
      historianCol(v1, 'float8', value, presentValue(v1, t1, t1)),
      historianCol(t2, 'timestamptz', `CASE WHEN ${present} THEN g.ts END`, `max(${t2})`),
      historianCol(v2, 'float8', value, presentValue(v2, `${t2} DESC`, t2)),
      ...integralCols(prefix, modes, present),
    ],
  ];
};
