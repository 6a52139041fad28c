import { Type, type TSchema } from '@sinclair/typebox';
import { ATTACHED_FIELDS } from '../../../config/data.js';
import { entryKeys } from '../../../config/shape.js';
import { ATTACH_KINDS, EQUIPMENT, type AttachKind } from '../../../equipment.js';
import { BigIdString, DateTimeInput, IntId, Nullable } from '../../../schemas/common.js';
import * as records from '../../../schemas/records.js';
import { recordSchema, type Field } from '../../../schemas/records.js';
import { lightOf } from './serialization.js';

// Request and response schemas of the configuration paths (interface §2.1–2.8, §4.3; contract §5).
// Every DTO exists in a full and a light variant, built by one function from the record lists;
// the meters', pumps' and tank groups' are built alike from the registry of kinds.

export const SiteQuery = Type.Object({ siteId: IntId });
const StartDate = Type.String({
  ...DateTimeInput,
  description: 'ISO 8601 date-time (no offset: UTC); what changed at or after it',
});
export const SiteUpdatesQuery = Type.Object({ siteId: IntId, startDate: StartDate });
export const UpdatesQuery = Type.Object({ startDate: StartDate });
export const idParams = (name: string) => Type.Object({ [name]: IntId });

/** A record's title: its kind's label, capitalized ("Flow meter"). */
const titleOf = (kind: AttachKind) =>
  EQUIPMENT[kind].label[0].toUpperCase() + EQUIPMENT[kind].label.slice(1);

/** The kinds' lists under their keys in a site's configuration (meters, pumps, tankGroups). */
const listsOf = (schema: (kind: AttachKind) => TSchema): Record<string, TSchema> =>
  Object.fromEntries(ATTACH_KINDS.map((k) => [entryKeys(k).list, Type.Array(schema(k))]));

const RegisterFull = Type.Object(
  {
    ...recordSchema(records.REGISTER, 'out').properties,
    SiteModbusInOutDevices: Type.Object(
      { DeviceName: Type.String(), SlaveAddress: Type.Integer() },
      { description: "the owning Modbus device's name and slave address" },
    ),
    ConnectionName: Nullable(
      Type.String({ description: "for a register read by a sensor: its Modbus device's name" }),
    ),
    ConnectionSlaveAddress: Nullable(
      Type.Integer({
        description: "for a register read by a sensor: its Modbus device's slave address",
      }),
    ),
    ConnectionSensorID: Nullable(
      Type.Integer({ description: 'the sensor that reads this register' }),
    ),
  },
  { title: 'Register' },
);
const RegisterLight = lightOf(RegisterFull, 'Register (light)');

const SiteRecord = Type.Object(
  { ...recordSchema(records.SITE, 'out').properties, CompanyName: Type.String() },
  // Not "Site": that is the site list's item (GET /v1/sites), a different shape.
  { title: 'SiteRecord', description: "the site's own record" },
);

function dtos(light: boolean) {
  const suffix = light ? ' (light)' : '';
  const rec = (fields: Field[], title: string, omit: string[] = []) =>
    light
      ? lightOf(recordSchema(fields, 'out'), `${title}${suffix}`, omit)
      : recordSchema(fields, 'out', title);
  const Register = light ? RegisterLight : RegisterFull;
  const Registers = Type.Array(Register);
  const Scaling = Type.Object(
    {
      ...rec(records.SENSOR_SCALING, 'Sensor scaling').properties,
      ScalePoints: Type.Array(
        Type.Object({
          F: Type.Number({ description: 'actuator position, percent' }),
          V: Type.Number({ description: 'sensor value' }),
        }),
        {
          description: 'parsed from the stored JSON; [] when unset or unparseable',
        },
      ),
    },
    { title: `Sensor scaling${suffix}` },
  );
  const ActuatorEntry = Type.Object(
    {
      actuator: rec(records.ACTUATOR, 'Actuator', records.ACTUATOR_HEAVY_FIELDS),
      sensorScalings: Type.Array(Scaling),
      sensorTriggers: Type.Array(rec(records.SENSOR_TRIGGER, 'Sensor trigger')),
      tankGroupConnections: Type.Array(rec(records.TANK_GROUP_CONNECTION, 'Tank group connection')),
    },
    { title: `Actuator configuration entry${suffix}` },
  );
  const dto = (title: string, props: Record<string, TSchema>) =>
    Type.Object(props, { title: `${title}${suffix}` });
  const Sensor = rec(records.SENSOR, 'Sensor');
  const SensorConfig = dto('SensorConfigDto', { sensor: Sensor, sensorRegisters: Registers });
  /** A meter's, pump's or tank group's record and DTOs: <Name>RegistersDto, <Name>ConfigDto. */
  const ofKind = (kind: AttachKind) => {
    const { label, nameStem } = EQUIPMENT[kind];
    const keys = entryKeys(kind);
    const registers = () => ({
      [keys.roles]: Type.Object(
        {},
        {
          additionalProperties: Nullable(Register),
          description: `${label} register role name -> Register, or null when the role is unconfigured`,
        },
      ),
      sensorRegisters: Registers,
    });
    const record = rec(ATTACHED_FIELDS[kind], titleOf(kind));
    const configDto = dto(`${nameStem}ConfigDto`, { [keys.record]: record, ...registers() });
    return {
      record,
      registers: dto(`${nameStem}RegistersDto`, registers()),
      config: configDto,
      configs: Type.Array(configDto),
    };
  };
  const byKind = Object.fromEntries(ATTACH_KINDS.map((k) => [k, ofKind(k)])) as Record<
    AttachKind,
    ReturnType<typeof ofKind>
  >;
  return {
    Register,
    Registers,
    SensorConfigs: Type.Array(SensorConfig),
    byKind,
    ActuatorEntry,
    ActuatorEntries: Type.Array(ActuatorEntry),
    SiteConfig: dto('SiteConfigDto', {
      site: light ? lightOf(SiteRecord, 'SiteRecord (light)') : SiteRecord,
      devices: Type.Array(rec(records.MODBUS_DEVICE, 'Modbus device')),
      sensors: Type.Array(SensorConfig),
      ...listsOf((k) => byKind[k].config),
      actuators: Type.Array(ActuatorEntry),
    }),
    Sensor,
  };
}

export const FULL = dtos(false);
export const LIGHT = dtos(true);

const CompactRegisterId = Type.Union([Type.Integer(), BigIdString, Type.Null()], {
  description:
    'register id as a JSON number (a string only for an id beyond 2^53), or null when the role is unconfigured',
});
const RegisterIds = Type.Array(BigIdString, {
  description: 'register ids (keys of `registers`), in the order the sensors read them',
});
/** A meter, pump or tank group in the compact shape: its record, role map and registers by id. */
const compactEntry = (kind: AttachKind) =>
  Type.Object({
    [entryKeys(kind).record]: FULL.byKind[kind].record,
    [entryKeys(kind).roles]: Type.Object(
      {},
      {
        additionalProperties: CompactRegisterId,
        description: `${EQUIPMENT[kind].label} register role name -> register id (a key of \`registers\`) or null`,
      },
    ),
    sensorRegisterIds: RegisterIds,
  });

export const CompactSiteConfig = Type.Object(
  {
    devices: Type.Object(
      {},
      {
        additionalProperties: recordSchema(records.MODBUS_DEVICE, 'out', 'Modbus device'),
        description: 'Modbus devices keyed by SiteModbusInOutDeviceID',
      },
    ),
    registers: Type.Object(
      {},
      {
        additionalProperties: RegisterLight,
        description:
          'every register the document refers to (actuator register fields included), once, keyed by SiteIODeviceRegisterID, null properties stripped',
      },
    ),
    sensors: Type.Array(Type.Object({ sensor: FULL.Sensor, registerIds: RegisterIds })),
    ...listsOf(compactEntry),
    actuators: Type.Array(FULL.ActuatorEntry, {
      description: 'always every actuator of the site, also on the updates path',
    }),
  },
  { title: 'CompactSiteConfigDto' },
);
