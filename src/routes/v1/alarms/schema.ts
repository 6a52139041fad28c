import { Type } from '@sinclair/typebox';
import {
  BigIdInput,
  BigIdString,
  DateTimeInput,
  DateTimeOutput,
  Measured,
  IntId,
  Nullable,
} from '../../../schemas/common.js';
import {
  DEFAULT_SEVERITY,
  SEVERITIES,
  SOURCES,
  type AlarmSource,
  type Severity,
} from '../../../alarms/record.js';

// Alarm DTOs (interface 4.8, contract 8), named as the contract names them.

/** A plain string enum: one clear validation error ("must be equal to one of the allowed values"), not one per literal. */
export const StringEnum = <T extends string>(values: readonly T[], options: object = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
const SeverityEnum = (options: object = {}) => StringEnum<Severity>(SEVERITIES, options);

/** An equipment id field: the EquipmentTypeID it gets is part of its description. */
const equipmentId = (what: string) =>
  Type.Optional(
    Nullable({
      ...IntId,
      description: `the ${what} the alarm is about; it must belong to the site`,
    }),
  );

const alarmFields = {
  flowMeterID: equipmentId('flow meter (EquipmentTypeID 1)'),
  sitePumpID: equipmentId('pump (EquipmentTypeID 2)'),
  siteTankGroupID: equipmentId('tank group (EquipmentTypeID 3)'),
  sensorID: equipmentId('sensor (EquipmentTypeID 5)'),
  alarmType: Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      'what is wrong, e.g. HighPressure, TankOverflow, PumpTrip; part of the deduplication key, compared exactly (case matters)',
  }),
  severity: Type.Optional(
    SeverityEnum({
      default: DEFAULT_SEVERITY,
      description: `one of ${SEVERITIES.join(', ')}; default ${DEFAULT_SEVERITY}`,
    }),
  ),
  message: Type.String({ maxLength: 1000, description: 'text for operators' }),
  value: Type.Optional(
    Nullable({ ...Measured, description: 'the measured value that raised the alarm, if any' }),
  ),
  timestamp: {
    ...DateTimeInput,
    description:
      'when the edge device saw the alarm; ISO 8601, no offset means UTC; at most 24 h in the future, not before 1970',
  },
};

const EQUIPMENT_RULE =
  'At most one of sensorID, flowMeterID, sitePumpID, siteTankGroupID (several: 400); none (or null) makes it a site alarm ' +
  '(EquipmentTypeID and EquipmentID null).';

export const AlarmDto = Type.Object(
  { siteId: { ...IntId, description: 'the site raising the alarm' }, ...alarmFields },
  { title: 'AlarmDto', description: `One alarm. ${EQUIPMENT_RULE}` },
);

const SiteAlarm = Type.Object(alarmFields, {
  description: `An AlarmDto without siteId (the site is the envelope's). ${EQUIPMENT_RULE}`,
});

const ResolveEntry = Type.Object({
  SiteAlarmLogID: {
    ...BigIdInput,
    description:
      'the alarm to resolve (from AlarmSendResultDto or the active list); string or integer, a string above 2^53',
  },
  note: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 1000,
        description: 'why or how it was resolved; kept with the alarm',
      }),
    ),
  ),
});

export const sendBatch = (maxBatch: number) =>
  Type.Object(
    {
      siteId: IntId,
      alarms: Type.Array(SiteAlarm, {
        maxItems: maxBatch,
        description: `at most ${maxBatch} alarms, all of this site`,
      }),
    },
    { title: 'MultiSiteAlarmsDto', description: 'Several alarms of one site' },
  );

export const resolveBatch = (maxBatch: number) =>
  Type.Object(
    {
      siteId: IntId,
      alarms: Type.Array(ResolveEntry, {
        maxItems: maxBatch,
        description: `at most ${maxBatch} alarms of this site`,
      }),
    },
    // The interface names this body MultiSiteAlarmsDto too; a name of its own keeps each operation's client type exact.
    {
      title: 'MultiSiteAlarmsResolveDto',
      description:
        'Alarms of one site to resolve: the resolve form of MultiSiteAlarmsDto (the interface gives both bodies that name)',
    },
  );

export const activeFilter = (maxBatch: number, defaultLimit: number) =>
  Type.Object(
    {
      siteIds: Type.Array(IntId, {
        minItems: 1,
        maxItems: maxBatch,
        description: `1 to ${maxBatch} site ids`,
      }),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: maxBatch,
          default: defaultLimit,
          description: `most alarms returned (the newest); default ${defaultLimit}`,
        }),
      ),
      severities: Type.Optional(
        Type.Array(SeverityEnum(), {
          minItems: 1,
          maxItems: SEVERITIES.length,
          uniqueItems: true,
          description:
            'only alarms of these severities (applied before `limit`); absent: every severity',
        }),
      ),
    },
    { title: 'ActiveAlarmsFilterDto' },
  );

/** The result of one alarm of a request: its id, and which of two things the request did to it. */
const alarmResult = (title: string, statuses: [string, string], description: string) =>
  Type.Object(
    {
      SiteAlarmLogID: BigIdString,
      status: Type.Union(
        statuses.map((status) => Type.Literal(status)),
        { description },
      ),
    },
    { title },
  );

export const AlarmSendResultDto = alarmResult(
  'AlarmSendResultDto',
  ['created', 'duplicate'],
  'created: a new open alarm; duplicate: an open alarm of the same key was counted again',
);

export const AlarmResolveResultDto = alarmResult(
  'AlarmResolveResultDto',
  ['resolved', 'already_resolved'],
  'resolved: by this request; already_resolved: it was resolved before (or by an earlier entry of this request)',
);

/** The five fields of alarm management (contract 16), on every alarm record. */
const lifecycleFields = {
  Source: StringEnum<AlarmSource>(SOURCES, {
    description:
      'who raised it: edge (a send), rule (a limit rule), communication (the loss of communication)',
  }),
  RaisedAt: {
    ...DateTimeOutput,
    description:
      "when the service raised it: the first send's arrival, whatever its timestamp says",
  },
  AcknowledgedAt: Nullable({
    ...DateTimeOutput,
    description: 'when it was acknowledged (the first acknowledge); null: unacknowledged',
  }),
  AcknowledgedBy: Nullable(Type.String({ description: 'the client id that acknowledged it' })),
  ShelvedUntil: Nullable({
    ...DateTimeOutput,
    description: 'null unless shelved: when the shelf ends (the service then unshelves it)',
  }),
};

export const ActiveAlarmDto = Type.Object(
  {
    SiteAlarmLogID: BigIdString,
    SiteID: Type.Integer(),
    EquipmentTypeID: Nullable(
      Type.Integer({
        description: '1 flow meter, 2 pump, 3 tank group, 5 sensor; null for a site alarm',
      }),
    ),
    EquipmentID: Nullable({
      ...BigIdString,
      description: 'id of that equipment, as a string; null for a site alarm',
    }),
    AlarmType: Type.String(),
    Severity: SeverityEnum(),
    Message: Type.String({ description: 'of the latest send (by timestamp)' }),
    Value: Nullable(Type.Number({ description: 'of the latest send (by timestamp)' })),
    FirstSeen: {
      ...DateTimeOutput,
      description: 'earliest timestamp of the sends counted in this alarm',
    },
    LastSeen: {
      ...DateTimeOutput,
      description: 'latest timestamp of the sends counted in this alarm; never moves backwards',
    },
    Occurrences: Type.Integer({ description: 'sends counted in this alarm, the first included' }),
    ...lifecycleFields,
  },
  { title: 'ActiveAlarmDto', description: 'An unresolved alarm' },
);
