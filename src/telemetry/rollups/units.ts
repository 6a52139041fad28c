import { EQUIPMENT } from '../../equipment.js';
import { KINDS, type TelemetryKind } from '../kinds.js';

// A "unit" is the mergeable statistics of some samples of one equipment: a single log row, a rollup
// row (15 minutes, an hour, a day) or the merge of several units. Rollups, their refresh and the
// summary downloads all speak this one form, so a bucket computed from logs, from rollups or from a
// mix of both is the same number. This file holds, per kind, each unit column with the SQL that
// makes it from a log row (alias g) and the aggregate that merges units (columns of the relation
// being grouped), and builds the merge query.

/** The rollups' levels in minutes (15-minute quarters, hours, days), all aligned to UTC from the epoch. */
export const EPOCH = `TIMESTAMPTZ '1970-01-01 00:00:00+00'`;
export const LEVELS = [15, 60, 1440] as const;
export type Level = (typeof LEVELS)[number];
/** SQL for the start of the level's bucket that holds `expr`. */
export const binOf = (minutes: number, expr: string) =>
  `date_bin('${minutes} minutes', ${expr}, ${EPOCH})`;

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
  modes: ('is' | 'il')[];
  /** The field is never null in a unit (sensors): no partition by presence needed. */
  always: boolean;
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

const col = (name: string, type: string, raw: string, merge: string): UnitColumn => ({
  name,
  type,
  raw,
  merge,
});
const firstBy = (c: string) => `(array_agg(${c} ORDER BY first_ts))[1]`;
const latest = (c: string) => `(array_agg(${c} ORDER BY last_ts DESC))[1]`;
const n = (c: string, field: string) =>
  col(c, 'int4', `(g.${field} IS NOT NULL)::int`, `sum(${c})::int`);
const stat = (prefix: string, field: string, which: ('min' | 'max' | 'sum')[]) => [
  ...which.map((w) => col(`${prefix}_${w}`, 'float8', `g.${field}`, `${w}(${prefix}_${w})`)),
  n(`${prefix}_n`, field),
];

const COMMON = [
  col('count', 'int4', '1', 'sum(count)::int'),
  col('first_ts', 'timestamptz', 'g.ts', 'min(first_ts)'),
  col('last_ts', 'timestamptz', 'g.ts', 'max(last_ts)'),
];

/** A kind's unit: its log table and id column (kinds.ts), its rollup table, and its columns. */
const unit = (
  kind: TelemetryKind,
  chain: boolean,
  columns: UnitColumn[],
  integrals: [IntegralField, UnitColumn[]][] = [],
): UnitSpec => ({
  kind,
  code: EQUIPMENT[kind].code,
  logTable: KINDS[kind].table,
  idColumn: KINDS[kind].idColumn,
  rollupTable: `${kind}_rollups`,
  chain,
  columns: [...columns, ...integrals.flatMap(([, c]) => c)],
  integrals: integrals.map(([f]) => f),
});

const hcol = (name: string, type: string, raw: string, merge: string): UnitColumn => ({
  ...col(name, type, raw, merge),
  historian: true,
});
const integralCols = (p: string, modes: ('is' | 'il')[], present: string) =>
  modes.map((m) =>
    hcol(
      `${p}_${m}`,
      'float8',
      `CASE WHEN ${present} THEN 0::float8 END`,
      `sum(${p}_${m} + ${p}_l${m[1]})`,
    ),
  );
/** A nullable field with its own first and last sample columns. */
const integral = (
  p: string,
  value: string,
  field: string,
  modes: ('is' | 'il')[],
): [IntegralField, UnitColumn[]] => {
  const present = `g.${field} IS NOT NULL`;
  return [
    { prefix: p, t1: `${p}_t1`, v1: `${p}_v1`, t2: `${p}_t2`, v2: `${p}_v2`, modes, always: false },
    [
      hcol(`${p}_t1`, 'timestamptz', `CASE WHEN ${present} THEN g.ts END`, `min(${p}_t1)`),
      hcol(
        `${p}_v1`,
        'float8',
        value,
        `(array_agg(${p}_v1 ORDER BY ${p}_t1) FILTER (WHERE ${p}_t1 IS NOT NULL))[1]`,
      ),
      hcol(`${p}_t2`, 'timestamptz', `CASE WHEN ${present} THEN g.ts END`, `max(${p}_t2)`),
      hcol(
        `${p}_v2`,
        'float8',
        value,
        `(array_agg(${p}_v2 ORDER BY ${p}_t2 DESC) FILTER (WHERE ${p}_t2 IS NOT NULL))[1]`,
      ),
      ...integralCols(p, modes, present),
    ],
  ];
};

export const UNITS: Record<TelemetryKind, UnitSpec> = {
  sensor: unit(
    'sensor',
    false,
    [
      ...COMMON,
      ...stat('v', 'value', ['min', 'max', 'sum']),
      col('v_first', 'float8', 'g.value', firstBy('v_first')),
      col('v_last', 'float8', 'g.value', latest('v_last')),
    ],
    [
      [
        {
          prefix: 'v',
          t1: 'first_ts',
          v1: 'v_first',
          t2: 'last_ts',
          v2: 'v_last',
          modes: ['is', 'il'],
          always: true,
        },
        [
          ...integralCols('v', ['is', 'il'], 'true'),
          // Times of the lowest and highest samples, the earliest of equal values (plot values).
          hcol('v_tmin', 'timestamptz', 'g.ts', '(array_agg(v_tmin ORDER BY v_min, v_tmin))[1]'),
          hcol(
            'v_tmax',
            'timestamptz',
            'g.ts',
            '(array_agg(v_tmax ORDER BY v_max DESC, v_tmax))[1]',
          ),
        ],
      ],
    ],
  ),
  meter: unit(
    'meter',
    true,
    [
      ...COMMON,
      col('fr_sum', 'float8', 'g.flow_rate', 'sum(fr_sum)'),
      n('fr_n', 'flow_rate'),
      col('fr_max', 'float8', 'g.flow_rate', 'max(fr_max)'),
      ...stat('p', 'pressure', ['sum']),
      // The chain skips readings without a total: first and last total of the unit, and the volume
      // between its own consecutive totals (merged with the links computed between units).
      col(
        'tv_first',
        'float8',
        'g.total_volume',
        `(array_agg(tv_first ORDER BY first_ts) FILTER (WHERE tv_first IS NOT NULL))[1]`,
      ),
      col(
        'tv_last',
        'float8',
        'g.total_volume',
        `(array_agg(tv_last ORDER BY last_ts DESC) FILTER (WHERE tv_last IS NOT NULL))[1]`,
      ),
      col('tv_inner', 'float8', '0::float8', 'sum(tv_inner + link)'),
      col('tv_latest', 'float8', 'g.total_volume', latest('tv_latest')),
    ],
    [
      integral('fr', 'g.flow_rate', 'flow_rate', ['il']),
      integral('p', 'g.pressure', 'pressure', ['il']),
    ],
  ),
  pump: unit(
    'pump',
    false,
    [
      ...COMMON,
      col('run_true', 'int4', '(g.running IS TRUE)::int', 'sum(run_true)::int'),
      n('run_n', 'running'),
      ...stat('f', 'frequency', ['sum']),
      ...stat('p', 'pressure', ['sum', 'max']),
      col('status_id_latest', 'int4', 'g.status_id', latest('status_id_latest')),
      col('status_latest', 'text', 'g.status', latest('status_latest')),
    ],
    [
      integral('r', 'g.running::int::float8', 'running', ['is']),
      integral('f', 'g.frequency', 'frequency', ['il']),
      integral('p', 'g.pressure', 'pressure', ['il']),
    ],
  ),
  tank: unit(
    'tank',
    false,
    [
      ...COMMON,
      ...stat('e', 'entry_tank_level', ['min', 'max', 'sum']),
      ...stat('x', 'exit_tank_level', ['min', 'max', 'sum']),
      col('tv_latest', 'float8', 'g.total_volume', latest('tv_latest')),
    ],
    [
      integral('e', 'g.entry_tank_level', 'entry_tank_level', ['il']),
      integral('x', 'g.exit_tank_level', 'exit_tank_level', ['il']),
    ],
  ),
};

export const UNIT_LIST = Object.values(UNITS);

/** Column names of a unit relation: id, t0 (start of the unit: its bucket, or the log's time), then the statistics. */
export const unitNames = (spec: UnitSpec) => ['id', 't0', ...spec.columns.map((c) => c.name)];

/** Log rows of `g` as units. */
export const rawUnits = (spec: UnitSpec) =>
  `g.${spec.idColumn} AS id, g.ts AS t0, ${spec.columns.map((c) => `${c.raw} AS ${c.name}`).join(', ')}`;

/** Rollup rows of `r` as units. */
export const rollupUnits = (spec: UnitSpec) =>
  `r.${spec.idColumn} AS id, r.bucket AS t0, ${spec.columns.map((c) => `r.${c.name}`).join(', ')}`;

/**
 * The links of each integral field between neighbouring units of the same equipment and group that
 * carry the field (window over `grouped`): `<p>_ls` stepped, `<p>_ll` linear, 0 for the first.
 */
function linkColumns(spec: UnitSpec): string[] {
  return spec.integrals.flatMap((f) => {
    const w = `(PARTITION BY id, grp${f.always ? '' : `, ${f.t1} IS NULL`} ORDER BY t0)`;
    const dt = `date_part('epoch', ${f.t1} - lag(${f.t2}) OVER ${w})`;
    // Values under 1e-290 count as 0 here: their product with a gap could round to 0, which the
    // database refuses as an underflow (the integral changes by less than 1e-280).
    const v = (x: string) => `CASE WHEN abs(${x}) < 1e-290 THEN 0 ELSE ${x} END`;
    const prev = v(`lag(${f.v2}) OVER ${w}`);
    return [
      `coalesce(${prev} * ${dt}, 0) AS ${f.prefix}_ls`,
      `coalesce((${prev} + ${v(f.v1)}) / 2 * ${dt}, 0) AS ${f.prefix}_ll`,
    ];
  });
}

/**
 * Merges the units of `units` (a query or CTE name giving unitNames columns) grouped by equipment
 * and `group` (an expression over t0, NULL for units that only feed the volume chain). Meters link
 * each unit's first total to the previous unit's last total, within `chainBy` (`id` for downloads:
 * the previous unit may lie in an earlier bucket; `id, grp` for rollups: links inside the new unit
 * only). A link is the increase, or the new total itself after a drop (a counter reset), or 0 for
 * the first total of the chain. With `historian` (rollups, time-weighted downloads) the historian
 * columns are merged too, their integrals linked inside each group; without it (event-weighted
 * downloads) they are left out. Yields id, grp and the merged columns.
 */
export function mergeUnits(
  spec: UnitSpec,
  units: string,
  group: string,
  chainBy: 'id' | 'id, grp',
  historian = true,
): string {
  const columns = spec.columns.filter((c) => historian || !c.historian);
  const links = historian ? linkColumns(spec) : [];
  const names = [...unitNames(spec), ...links.map((l) => l.slice(l.lastIndexOf(' AS ') + 4))];
  const merged = columns.map((c) => `${c.merge} AS ${c.name}`).join(', ');
  const grouped = links.length
    ? `grouped0 AS (SELECT ${unitNames(spec).join(', ')}, ${group} AS grp FROM ${units} u),
  grouped AS (SELECT grouped0.*, ${links.join(', ')} FROM grouped0)`
    : `grouped AS (SELECT ${names.join(', ')}, ${group} AS grp FROM ${units} u)`;
  if (!spec.chain)
    return `WITH ${grouped} SELECT id, grp, ${merged} FROM grouped WHERE grp IS NOT NULL GROUP BY id, grp`;
  const cols = [...names, 'grp'].join(', ');
  return `WITH ${grouped},
  k AS (
    SELECT ${cols}, 0::float8 AS link FROM grouped WHERE tv_first IS NULL
    UNION ALL
    SELECT ${cols}, CASE WHEN prev IS NULL THEN 0 WHEN tv_first >= prev THEN tv_first - prev ELSE tv_first END
      FROM (SELECT grouped.*, lag(tv_last) OVER (PARTITION BY ${chainBy} ORDER BY t0) AS prev FROM grouped WHERE tv_first IS NOT NULL) x
  )
  SELECT id, grp, ${merged} FROM k WHERE grp IS NOT NULL GROUP BY id, grp`;
}
