import type { UnitSpec } from './unit-columns.js';

// The SQL that reads log rows and rollup rows as units (units.ts) and merges units: the rollups'
// refresh and both kinds of summary download build their statements from it.

/** Column names of a unit relation: id, t0 (start of the unit: its bucket, or the log's time), then the statistics. */
export const unitNames = (spec: UnitSpec) => [
  'id',
  't0',
  ...spec.columns.map((column) => column.name),
];

/** Log rows of `g` as units. */
export const rawUnits = (spec: UnitSpec) =>
  `g.${spec.idColumn} AS id, g.ts AS t0, ${spec.columns.map((column) => `${column.raw} AS ${column.name}`).join(', ')}`;

/** Rollup rows of `r` as units. */
export const rollupUnits = (spec: UnitSpec) =>
  `r.${spec.idColumn} AS id, r.bucket AS t0, ${spec.columns.map((column) => `r.${column.name}`).join(', ')}`;

/**
 * The links of each integral field between neighbouring units of the same equipment and group that
 * carry the field (window over `grouped`): `<p>_ls` stepped, `<p>_ll` linear, 0 for the first.
 */
function linkColumns(spec: UnitSpec): string[] {
  return spec.integrals.flatMap((field) => {
    const window = `(PARTITION BY id, grp${field.always ? '' : `, ${field.t1} IS NULL`} ORDER BY t0)`;
    const gap = `date_part('epoch', ${field.t1} - lag(${field.t2}) OVER ${window})`;
    // Values under 1e-290 count as 0 here: their product with a gap could round to 0, which the
    // database refuses as an underflow (the integral changes by less than 1e-280).
    const flushed = (value: string) => `CASE WHEN abs(${value}) < 1e-290 THEN 0 ELSE ${value} END`;
    const prev = flushed(`lag(${field.v2}) OVER ${window}`);
    return [
      `coalesce(${prev} * ${gap}, 0) AS ${field.prefix}_ls`,
      `coalesce((${prev} + ${flushed(field.v1)}) / 2 * ${gap}, 0) AS ${field.prefix}_ll`,
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
  const columns = spec.columns.filter((column) => historian || !column.historian);
  const links = historian ? linkColumns(spec) : [];
  const names = [
    ...unitNames(spec),
    ...links.map((link) => link.slice(link.lastIndexOf(' AS ') + 4)),
  ];
  const merged = columns.map((column) => `${column.merge} AS ${column.name}`).join(', ');
  const grouped = links.length
    ? `grouped0 AS (SELECT ${unitNames(spec).join(', ')}, ${group} AS grp FROM ${units} u),
  grouped AS (SELECT grouped0.*, ${links.join(', ')} FROM grouped0)`
    : // In time order: the sums then add the same doubles in the same order wherever the units come
      // from (rows in the order they lie, or an archived day's units), so the answer is the same bytes.
      `grouped AS (SELECT ${names.join(', ')}, ${group} AS grp FROM ${units} u ORDER BY id, t0)`;
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
