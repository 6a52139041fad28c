import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { BigIdInput, DateTimeInput, IntId, Nullable } from '../schemas/common.js';
import { ClientRole } from '../schemas/clients.js';
import * as records from '../schemas/records.js';
import { recordSchema } from '../schemas/records.js';
import type { AlarmRuleIn } from '../alarms/rules/definition.js';
import { AlarmRuleSchema } from './alarm-rules.js';
import {
  NotificationChannelSchema,
  NotificationPolicySchema,
  type NotificationChannelIn,
  type NotificationPolicyIn,
} from './notifications.js';

// The provisioning document of contract §3: every record is the interface's record plus its links.

const IdList = Type.Array(IntId, { maxItems: 100_000 });
const Roles = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Nullable(BigIdInput), {
  description: 'register role name -> register id, or null for an unconfigured role',
});

/** A record's fields plus its links. */
const withExtra = (base: TObject, extra: TProperties) =>
  Type.Object({ ...base.properties, ...extra });

export const ScalePoints = Type.Union(
  [Type.Array(Type.Object({ F: Type.Number(), V: Type.Number() })), Type.String(), Type.Null()],
  {
    description: 'an array of {F, V}, or the JSON text of one as stored',
  },
);

export const ChangeRecordIn = Type.Object({
  TransactionID: Type.Optional(IntId),
  LogTypeName: Type.String({ maxLength: 200 }),
  LogType: Type.Integer({ minimum: 1, maximum: 5 }),
  TicketNumber: Type.Optional(Type.Integer()),
  Editor: Type.String({ maxLength: 200 }),
  EditorCompany: Type.String({ maxLength: 200 }),
  ChangeDate: DateTimeInput,
  ChangeItems: Type.Array(
    Type.Object({
      PropertyName: Type.String({ maxLength: 200 }),
      OriginalValue: Type.String({ maxLength: 4000 }),
      NewValue: Type.String({ maxLength: 4000 }),
    }),
    { maxItems: 1000 },
  ),
});

const ClientIn = Type.Object({
  clientId: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._:@-]+$' }),
  clientSecret: Type.String({ minLength: 8, maxLength: 1000 }),
  siteIds: Type.Union([IdList, Type.Literal('*')]),
  cameraIds: Type.Optional(Type.Union([IdList, Type.Literal('*')])),
  admin: Type.Optional(Type.Boolean()),
  role: Type.Optional(ClientRole),
});

const ImageIn = Type.Object({
  UUID: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  }),
  Kind: Type.Union([Type.Literal('ticket'), Type.Literal('motion')]),
  SiteID: IntId,
  TransactionID: Type.Optional(Nullable(IntId)),
  CameraID: Type.Optional(Nullable(IntId)),
  CapturedAt: Type.Optional(Nullable(DateTimeInput)),
  ContentType: Type.String({ pattern: '^image/[a-z0-9.+-]+$' }),
  DataBase64: Type.String({ minLength: 4, maxLength: 14_000_000 }),
});

/** A Sparkplug id (group, edge node, device): one MQTT topic level, no wildcard. */
const SparkplugId = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[^/+#]+$',
  description: 'a Sparkplug id: no /, + or #',
});

/** A binding of a Sparkplug metric to one field of one piece of equipment (contract 14). */
const SparkplugMetricIn = Type.Object({
  GroupID: SparkplugId,
  EdgeNodeID: SparkplugId,
  DeviceID: Type.Optional(Nullable(SparkplugId)),
  MetricName: Type.String({ minLength: 1, maxLength: 500 }),
  SiteSensorID: Type.Optional(IntId),
  SiteFlowMeterID: Type.Optional(IntId),
  SitePumpID: Type.Optional(IntId),
  SiteTankGroupID: Type.Optional(IntId),
  Field: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

export const ProvisioningDocument = Type.Object(
  {
    companies: Type.Optional(Type.Array(recordSchema(records.COMPANY, 'in'))),
    sites: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.SITE, 'in'), {
          CommLossMinutes: Type.Optional(
            Nullable(
              Type.Integer({
                minimum: 0,
                maximum: 10_080,
                description:
                  'minutes without data after which the site gets a COMM_LOSS alarm (default 60; 0: never)',
              }),
            ),
          ),
        }),
      ),
    ),
    clients: Type.Optional(Type.Array(ClientIn)),
    modbusDevices: Type.Optional(Type.Array(recordSchema(records.MODBUS_DEVICE, 'in'))),
    registers: Type.Optional(Type.Array(recordSchema(records.REGISTER, 'in'))),
    sensors: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.SENSOR, 'in'), {
          RegisterIDs: Type.Optional(Type.Array(BigIdInput)),
          Step: Type.Optional(
            Type.Boolean({
              description:
                'interpolation mode (contract 13): true stepped (counts, states, set-points), false continuous (the default)',
            }),
          ),
        }),
      ),
    ),
    flowMeters: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.FLOW_METER, 'in'), { Registers: Type.Optional(Roles) }),
      ),
    ),
    pumps: Type.Optional(
      Type.Array(withExtra(recordSchema(records.PUMP, 'in'), { Registers: Type.Optional(Roles) })),
    ),
    tankGroups: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.TANK_GROUP, 'in'), { Registers: Type.Optional(Roles) }),
      ),
    ),
    actuators: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.ACTUATOR, 'in'), {
          SensorScalings: Type.Optional(
            Type.Array(
              withExtra(recordSchema(records.SENSOR_SCALING, 'in'), {
                ScalePoints: Type.Optional(ScalePoints),
              }),
            ),
          ),
          SensorTriggers: Type.Optional(Type.Array(recordSchema(records.SENSOR_TRIGGER, 'in'))),
          TankGroupConnections: Type.Optional(
            Type.Array(recordSchema(records.TANK_GROUP_CONNECTION, 'in')),
          ),
        }),
      ),
    ),
    cameras: Type.Optional(Type.Array(recordSchema(records.CAMERA, 'in'))),
    transactions: Type.Optional(
      Type.Array(
        withExtra(recordSchema(records.TRANSACTION, 'in'), {
          Changes: Type.Optional(Type.Array(ChangeRecordIn)),
        }),
      ),
    ),
    images: Type.Optional(Type.Array(ImageIn)),
    sparkplugMetrics: Type.Optional(Type.Array(SparkplugMetricIn)),
    alarmRules: Type.Optional(Type.Array(AlarmRuleSchema)),
    notificationChannels: Type.Optional(Type.Array(NotificationChannelSchema, { maxItems: 1000 })),
    notificationPolicies: Type.Optional(Type.Array(NotificationPolicySchema, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);
// The document as the code reads it, once checked against the schema: every record by its interface
// field names, typed where the import reads a field itself (ids, sites, links); the other fields
// are only passed on to the database, as the schema let them through.

/** A record's interface fields. */
type Fields = Record<string, unknown>;
/** A 64-bit id, as a JSON string or integer. */
export type BigId = string | number;

export interface CompanyIn extends Fields {
  CompanyID: number;
}
/** A record of a site: a Modbus device, camera, sensor, meter, pump, tank group, actuator… */
export interface SitedIn extends Fields {
  SiteID: number;
}
export interface SiteIn extends SitedIn {
  CompanyID: number;
  /** Communication loss threshold (contract 16); absent or null: the default. */
  CommLossMinutes?: number | null;
}
export interface ModbusDeviceIn extends SitedIn {
  SiteModbusInOutDeviceID: number;
}
export interface RegisterIn extends Fields {
  SiteIODeviceRegisterID: BigId;
  SiteModbusInOutDeviceID: number;
}
export interface SensorIn extends SitedIn {
  SiteSensorID: number;
  Step?: boolean;
  /** The registers it reads, in order; absent: its list is left as it is. */
  RegisterIDs?: BigId[];
}
/** A flow meter, pump or tank group. */
export interface EquipmentIn extends SitedIn {
  /** Role name -> register id, null for an unconfigured role; absent: its roles are left as they are. */
  Registers?: Record<string, BigId | null>;
}
export interface FlowMeterIn extends EquipmentIn {
  SiteFlowMeterID: number;
}
export interface PumpIn extends EquipmentIn {
  SitePumpID: number;
}
export interface TankGroupIn extends EquipmentIn {
  SiteTankGroupID: number;
}
/** A sensor scaling, sensor trigger or tank-group connection of an actuator. */
export interface ActuatorChildIn extends Fields {
  SiteActuatorID: number;
  SiteSensorID?: number;
  SiteTankGroupID?: number;
  ScalePoints?: Static<typeof ScalePoints>;
}
export interface ActuatorIn extends SitedIn {
  SiteActuatorID: number;
  SensorScalings?: ActuatorChildIn[];
  SensorTriggers?: ActuatorChildIn[];
  TankGroupConnections?: ActuatorChildIn[];
}
export interface CameraIn extends SitedIn {
  CameraID: number;
}
export type ChangeIn = Static<typeof ChangeRecordIn>;
export interface TransactionIn extends SitedIn {
  TransactionID: number;
  TicketNumber: number;
  TransactionDate: string;
  Changes?: ChangeIn[];
}
export type ClientIn = Static<typeof ClientIn>;
export type ImageIn = Static<typeof ImageIn>;
export type SparkplugMetricIn = Static<typeof SparkplugMetricIn>;

export interface ProvisioningDocument {
  companies?: CompanyIn[];
  sites?: SiteIn[];
  clients?: ClientIn[];
  modbusDevices?: ModbusDeviceIn[];
  registers?: RegisterIn[];
  sensors?: SensorIn[];
  flowMeters?: FlowMeterIn[];
  pumps?: PumpIn[];
  tankGroups?: TankGroupIn[];
  actuators?: ActuatorIn[];
  cameras?: CameraIn[];
  transactions?: TransactionIn[];
  images?: ImageIn[];
  sparkplugMetrics?: SparkplugMetricIn[];
  alarmRules?: AlarmRuleIn[];
  notificationChannels?: NotificationChannelIn[];
  notificationPolicies?: NotificationPolicyIn[];
}

/** The type and the schema name the same lists (else this does not compile). */
type SameKeys<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? true
    : never
  : never;
const _sameLists: SameKeys<ProvisioningDocument, Static<typeof ProvisioningDocument>> = true;
