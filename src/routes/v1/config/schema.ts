import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { BigIdString, DateTimeInput, IntId, Nullable } from '../../../schemas/common.js';
import * as records from '../../../schemas/records.js';
import { recordSchema, type Field } from '../../../schemas/records.js';

// Request and response schemas of the configuration paths (interface §2.1–2.8, §4.3; contract §5).
// Every DTO exists in a full and a light variant, built by one function from the record lists.

export const SiteQuery = Type.Object({ siteId: IntId });
const StartDate = Type.String({
  ...DateTimeInput,
  description: 'ISO 8601 date-time (no offset: UTC); what changed at or after it',
});
export const SiteUpdatesQuery = Type.Object({ siteId: IntId, startDate: StartDate });
export const UpdatesQuery = Type.Object({ startDate: StartDate });
export const idParams = (name: string) => Type.Object({ [name]: IntId });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isNull = (s: unknown) => isObject(s) && s.type === 'null';

/**
 * The same schema with each `T | null` union written as `type: [T, 'null']`. fast-json-stringify
 * tells those apart with typeof instead of running a validator per value (a whole site serializes
 * about ten times faster), and @fastify/swagger documents both alike (`nullable: true`).
 */
export function forSerialization(schema: unknown): TSchema {
  if (Array.isArray(schema)) return schema.map(forSerialization) as unknown as TSchema;
  if (!isObject(schema)) return schema as TSchema;
  const { anyOf, ...rest } = schema;
  if (
    Array.isArray(anyOf) &&
    anyOf.length === 2 &&
    isNull(anyOf[1]) &&
    isObject(anyOf[0]) &&
    typeof anyOf[0].type === 'string'
  ) {
    const inner = forSerialization(anyOf[0]) as Record<string, unknown>;
    return { ...rest, ...inner, type: [inner.type, 'null'] } as unknown as TSchema;
  }
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, forSerialization(v)]),
  ) as TSchema;
}

/**
 * The light form of a full record schema: nullable fields become optional and never null
 * (light responses strip null properties); `omit` fields are left out.
 */
function lightOf(full: TObject, title: string, omit: string[] = []): TObject {
  const props: Record<string, TSchema> = {};
  for (const [name, s] of Object.entries(full.properties)) {
    if (omit.includes(name)) continue;
    const nonNull =
      Array.isArray(s.anyOf) && s.anyOf.some(isNull)
        ? (s.anyOf as TSchema[]).find((x) => !isNull(x))!
        : undefined;
    props[name] = nonNull ? Type.Optional(nonNull) : s;
  }
  return Type.Object(props, { title });
}

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
  const roleMap = (what: string) =>
    Type.Object(
      {},
      {
        additionalProperties: Nullable(Register),
        description: `${what} register role name -> Register, or null when the role is unconfigured`,
      },
    );
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
  const Sensor = rec(records.SENSOR, 'Sensor');
  const Meter = rec(records.FLOW_METER, 'Flow meter');
  const Pump = rec(records.PUMP, 'Pump');
  const Tank = rec(records.TANK_GROUP, 'Tank group');
  const dto = (title: string, props: Record<string, TSchema>) =>
    Type.Object(props, { title: `${title}${suffix}` });
  const SensorConfig = dto('SensorConfigDto', { sensor: Sensor, sensorRegisters: Registers });
  const MeterConfig = dto('MeterConfigDto', {
    meter: Meter,
    meterRegisters: roleMap('flow meter'),
    sensorRegisters: Registers,
  });
  const PumpConfig = dto('PumpConfigDto', {
    pump: Pump,
    pumpRegisters: roleMap('pump'),
    sensorRegisters: Registers,
  });
  const TankConfig = dto('TankConfigDto', {
    tankGroup: Tank,
    tankRegisters: roleMap('tank group'),
    sensorRegisters: Registers,
  });
  return {
    Register,
    Registers,
    MeterRegisters: dto('MeterRegistersDto', {
      meterRegisters: roleMap('flow meter'),
      sensorRegisters: Registers,
    }),
    PumpRegisters: dto('PumpRegistersDto', {
      pumpRegisters: roleMap('pump'),
      sensorRegisters: Registers,
    }),
    TankRegisters: dto('TankRegistersDto', {
      tankRegisters: roleMap('tank group'),
      sensorRegisters: Registers,
    }),
    SensorConfigs: Type.Array(SensorConfig),
    MeterConfigs: Type.Array(MeterConfig),
    PumpConfigs: Type.Array(PumpConfig),
    TankConfigs: Type.Array(TankConfig),
    ActuatorEntry,
    ActuatorEntries: Type.Array(ActuatorEntry),
    SiteConfig: dto('SiteConfigDto', {
      site: light ? lightOf(SiteRecord, 'SiteRecord (light)') : SiteRecord,
      devices: Type.Array(rec(records.MODBUS_DEVICE, 'Modbus device')),
      sensors: Type.Array(SensorConfig),
      meters: Type.Array(MeterConfig),
      pumps: Type.Array(PumpConfig),
      tankGroups: Type.Array(TankConfig),
      actuators: Type.Array(ActuatorEntry),
    }),
    Sensor,
    Meter,
    Pump,
    Tank,
  };
}

export const FULL = dtos(false);
export const LIGHT = dtos(true);

const CompactRegisterId = Type.Union([Type.Integer(), BigIdString, Type.Null()], {
  description:
    'register id as a JSON number (a string only for an id beyond 2^53), or null when the role is unconfigured',
});
const compactRoles = (what: string) =>
  Type.Object(
    {},
    {
      additionalProperties: CompactRegisterId,
      description: `${what} register role name -> register id (a key of \`registers\`) or null`,
    },
  );
const RegisterIds = Type.Array(BigIdString, {
  description: 'register ids (keys of `registers`), in the order the sensors read them',
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
    meters: Type.Array(
      Type.Object({
        meter: FULL.Meter,
        meterRegisters: compactRoles('flow meter'),
        sensorRegisterIds: RegisterIds,
      }),
    ),
    pumps: Type.Array(
      Type.Object({
        pump: FULL.Pump,
        pumpRegisters: compactRoles('pump'),
        sensorRegisterIds: RegisterIds,
      }),
    ),
    tankGroups: Type.Array(
      Type.Object({
        tankGroup: FULL.Tank,
        tankRegisters: compactRoles('tank group'),
        sensorRegisterIds: RegisterIds,
      }),
    ),
    actuators: Type.Array(FULL.ActuatorEntry, {
      description: 'always every actuator of the site, also on the updates path',
    }),
  },
  { title: 'CompactSiteConfigDto' },
);
