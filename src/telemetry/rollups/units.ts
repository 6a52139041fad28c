import { EQUIPMENT } from '../../equipment.js';
import { KINDS, type TelemetryKind } from '../kinds.js';
import {
  col,
  COMMON,
  firstBy,
  historianCol,
  integral,
  integralCols,
  latest,
  presentCount,
  presentValue,
  stat,
  type IntegralField,
  type UnitColumn,
  type UnitSpec,
} from './unit-columns.js';

// A "unit" is the mergeable statistics of some samples of one equipment: a single log row, a rollup
// row (15 minutes, an hour, a day) or the merge of several units. Rollups, their refresh and the
// summary downloads all speak this one form, so a bucket computed from logs, from rollups or from a
// mix of both is the same number. This file holds each kind's unit (its columns are built in
// unit-columns.ts, merged in merge-units.ts) and the rollups' levels.

/** The rollups' levels in minutes (15-minute quarters, hours, days), all aligned to UTC from the epoch. */
export const EPOCH = `TIMESTAMPTZ '1970-01-01 00:00:00+00'`;
export const LEVELS = [15, 60, 1440] as const;
export type Level = (typeof LEVELS)[number];
/** SQL for the start of the level's bucket that holds `expr`. */
export const binOf = (minutes: number, expr: string) =>
  `date_bin('${minutes} minutes', ${expr}, ${EPOCH})`;

interface UnitColumns {
  /** Meters: the volume chain (tv_first, tv_last, tv_inner) is linked across unit edges. */
  chain?: boolean;
  columns: UnitColumn[];
  /** The fields whose integral the unit carries, each with its own columns. */
  integrals: [IntegralField, UnitColumn[]][];
}

/** A kind's unit: its log table and id column (kinds.ts), its rollup table, and its columns. */
const unit = (
  kind: TelemetryKind,
  { chain = false, columns, integrals }: UnitColumns,
): UnitSpec => ({
  kind,
  code: EQUIPMENT[kind].code,
  logTable: KINDS[kind].table,
  idColumn: KINDS[kind].idColumn,
  rollupTable: `${kind}_rollups`,
  chain,
  columns: [...columns, ...integrals.flatMap(([, columns]) => columns)],
  integrals: integrals.map(([field]) => field),
});

/** A sensor's value: never null, so its first and last samples are the unit's own. */
const SENSOR_VALUE: IntegralField = {
  prefix: 'v',
  t1: 'first_ts',
  v1: 'v_first',
  t2: 'last_ts',
  v2: 'v_last',
  modes: ['is', 'il'],
  always: true,
  column: 'value',
  value: 'g.value',
};

export const UNITS: Record<TelemetryKind, UnitSpec> = {
  sensor: unit('sensor', {
    columns: [
      ...COMMON,
      ...stat('v', 'value', ['min', 'max', 'sum']),
      col('v_first', 'float8', 'g.value', firstBy('v_first')),
      col('v_last', 'float8', 'g.value', latest('v_last')),
    ],
    integrals: [
      [
        SENSOR_VALUE,
        [
          ...integralCols('v', ['is', 'il'], 'true'),
          // Times of the lowest and highest samples, the earliest of equal values (plot values).
          historianCol(
            'v_tmin',
            'timestamptz',
            'g.ts',
            '(array_agg(v_tmin ORDER BY v_min, v_tmin))[1]',
          ),
          historianCol(
            'v_tmax',
            'timestamptz',
            'g.ts',
            '(array_agg(v_tmax ORDER BY v_max DESC, v_tmax))[1]',
          ),
        ],
      ],
    ],
  }),
  meter: unit('meter', {
    chain: true,
    columns: [
      ...COMMON,
      col('fr_sum', 'float8', 'g.flow_rate', 'sum(fr_sum)'),
      presentCount('fr_n', 'flow_rate'),
      col('fr_max', 'float8', 'g.flow_rate', 'max(fr_max)'),
      ...stat('p', 'pressure', ['sum']),
      // The chain skips readings without a total: first and last total of the unit, and the volume
      // between its own consecutive totals (merged with the links computed between units).
      col('tv_first', 'float8', 'g.total_volume', presentValue('tv_first', 'first_ts', 'tv_first')),
      col(
        'tv_last',
        'float8',
        'g.total_volume',
        presentValue('tv_last', 'last_ts DESC', 'tv_last'),
      ),
      col('tv_inner', 'float8', '0::float8', 'sum(tv_inner + link)'),
      col('tv_latest', 'float8', 'g.total_volume', latest('tv_latest')),
    ],
    integrals: [
      integral('fr', 'g.flow_rate', 'flow_rate', ['il']),
      integral('p', 'g.pressure', 'pressure', ['il']),
    ],
  }),
  pump: unit('pump', {
    columns: [
      ...COMMON,
      col('run_true', 'int4', '(g.running IS TRUE)::int', 'sum(run_true)::int'),
      presentCount('run_n', 'running'),
      ...stat('f', 'frequency', ['sum']),
      ...stat('p', 'pressure', ['sum', 'max']),
      col('status_id_latest', 'int4', 'g.status_id', latest('status_id_latest')),
      col('status_latest', 'text', 'g.status', latest('status_latest')),
    ],
    integrals: [
      integral('r', 'g.running::int::float8', 'running', ['is']),
      integral('f', 'g.frequency', 'frequency', ['il']),
      integral('p', 'g.pressure', 'pressure', ['il']),
    ],
  }),
  tank: unit('tank', {
    columns: [
      ...COMMON,
      ...stat('e', 'entry_tank_level', ['min', 'max', 'sum']),
      ...stat('x', 'exit_tank_level', ['min', 'max', 'sum']),
      col('tv_latest', 'float8', 'g.total_volume', latest('tv_latest')),
    ],
    integrals: [
      integral('e', 'g.entry_tank_level', 'entry_tank_level', ['il']),
      integral('x', 'g.exit_tank_level', 'exit_tank_level', ['il']),
    ],
  }),
};

export const UNIT_LIST = Object.values(UNITS);
