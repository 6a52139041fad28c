import { EQUIPMENT, TELEMETRY_KINDS } from '../../equipment.js';
import type { TelemetryKind } from '../kinds.js';
import { UNITS } from '../rollups/units.js';

// The fields of a summary (contract 6), the same for both calculation bases: time-weighted
// summaries (contract 13) replace a few of them by time means.

/** A field that time-weighted summaries replace by the time mean of a log column (kinds.ts), × `scale`. */
interface TimeMean {
  name: string;
  column: string;
  scale: number;
}

const timeMean = (name: string, column: string, scale = 1): TimeMean => ({ name, column, scale });

/** Each kind's fields after id, start, end and count, in DTO order (encode-sql.ts writes them). */
const FIELDS: Record<TelemetryKind, (string | TimeMean)[]> = {
  sensor: ['min', 'max', timeMean('avg', 'value'), 'first', 'last'],
  meter: [
    'volume',
    'lastTotalVolume',
    timeMean('avgFlowRate', 'flow_rate'),
    'maxFlowRate',
    timeMean('avgPressure', 'pressure'),
  ],
  pump: [
    timeMean('runningPercent', 'running', 100),
    timeMean('avgFrequency', 'frequency'),
    timeMean('avgPressure', 'pressure'),
    'maxPressure',
    'lastStatusID',
    'lastStatus',
  ],
  tank: [
    'minEntryTankLevel',
    'maxEntryTankLevel',
    timeMean('avgEntryTankLevel', 'entry_tank_level'),
    'minExitTankLevel',
    'maxExitTankLevel',
    timeMean('avgExitTankLevel', 'exit_tank_level'),
    'lastTotalVolume',
  ],
};

const nameOf = (field: string | TimeMean) => (typeof field === 'string' ? field : field.name);

/** Every field name of a kind's summary DTO, in order. */
export const summaryFieldNames = (kind: TelemetryKind) => [
  EQUIPMENT[kind].idField,
  'start',
  'end',
  'count',
  ...FIELDS[kind].map(nameOf),
];

/** A time-weighted field of a summary. */
export interface WeightedField {
  /** Its position among the fields after count. */
  at: number;
  /** The index, in the kind's unit integrals (units.ts), of the field whose integral it averages. */
  slot: number;
  scale: number;
}

function weightedFields(kind: TelemetryKind): WeightedField[] {
  const integrals = UNITS[kind].integrals;
  return FIELDS[kind].flatMap((field, at) => {
    if (typeof field === 'string') return [];
    const slot = integrals.findIndex((integral) => integral.column === field.column);
    if (slot < 0) throw new Error(`${kind} units carry no integral of ${field.column}`);
    return [{ at, slot, scale: field.scale }];
  });
}

/** Per kind, the fields that are time-weighted, in DTO order; every other field is the event-weighted summary's own. */
export const WEIGHTED = Object.fromEntries(
  TELEMETRY_KINDS.map((kind) => [kind, weightedFields(kind)]),
) as Record<TelemetryKind, WeightedField[]>;
