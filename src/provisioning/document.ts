import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { BigIdInput, DateTimeInput, Nullable } from '../schemas/common.js';
import {
  ACTUATOR,
  CAMERA,
  COMPANY,
  FLOW_METER,
  MODBUS_DEVICE,
  PUMP,
  recordSchema,
  REGISTER,
  SENSOR,
  SENSOR_SCALING,
  SENSOR_TRIGGER,
  SITE,
  TANK_GROUP,
  TANK_GROUP_CONNECTION,
  TRANSACTION,
} from '../schemas/records.js';

// The provisioning document of contract §3: every record is the interface's record plus its links.

const IdList = Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100_000 });
const Roles = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Nullable(BigIdInput), {
  description: 'register role name -> register id, or null for an unconfigured role',
});

/** A record's fields plus its links; the record's own fields stay loosely typed (checked by the schema). */
const withExtra = <E extends TProperties>(base: TObject, extra: E) =>
  Type.Object({ ...(base.properties as Record<string, never>), ...extra } as E & {
    [k: string]: any;
  });

export const ScalePoints = Type.Union(
  [Type.Array(Type.Object({ F: Type.Number(), V: Type.Number() })), Type.String(), Type.Null()],
  {
    description: 'an array of {F, V}, or the JSON text of one as stored',
  },
);

export const ChangeRecordIn = Type.Object({
  TransactionID: Type.Optional(Type.Integer()),
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

export const ProvisioningDocument = Type.Object(
  {
    companies: Type.Optional(Type.Array(recordSchema(COMPANY, 'in'))),
    sites: Type.Optional(Type.Array(recordSchema(SITE, 'in'))),
    clients: Type.Optional(
      Type.Array(
        Type.Object({
          clientId: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._:@-]+$' }),
          clientSecret: Type.String({ minLength: 8, maxLength: 1000 }),
          siteIds: Type.Union([IdList, Type.Literal('*')]),
          cameraIds: Type.Optional(Type.Union([IdList, Type.Literal('*')])),
          admin: Type.Optional(Type.Boolean()),
        }),
      ),
    ),
    modbusDevices: Type.Optional(Type.Array(recordSchema(MODBUS_DEVICE, 'in'))),
    registers: Type.Optional(Type.Array(recordSchema(REGISTER, 'in'))),
    sensors: Type.Optional(
      Type.Array(
        withExtra(recordSchema(SENSOR, 'in'), {
          RegisterIDs: Type.Optional(Type.Array(BigIdInput)),
        }),
      ),
    ),
    flowMeters: Type.Optional(
      Type.Array(withExtra(recordSchema(FLOW_METER, 'in'), { Registers: Type.Optional(Roles) })),
    ),
    pumps: Type.Optional(
      Type.Array(withExtra(recordSchema(PUMP, 'in'), { Registers: Type.Optional(Roles) })),
    ),
    tankGroups: Type.Optional(
      Type.Array(withExtra(recordSchema(TANK_GROUP, 'in'), { Registers: Type.Optional(Roles) })),
    ),
    actuators: Type.Optional(
      Type.Array(
        withExtra(recordSchema(ACTUATOR, 'in'), {
          SensorScalings: Type.Optional(
            Type.Array(
              withExtra(recordSchema(SENSOR_SCALING, 'in'), {
                ScalePoints: Type.Optional(ScalePoints),
              }),
            ),
          ),
          SensorTriggers: Type.Optional(Type.Array(recordSchema(SENSOR_TRIGGER, 'in'))),
          TankGroupConnections: Type.Optional(
            Type.Array(recordSchema(TANK_GROUP_CONNECTION, 'in')),
          ),
        }),
      ),
    ),
    cameras: Type.Optional(Type.Array(recordSchema(CAMERA, 'in'))),
    transactions: Type.Optional(
      Type.Array(
        withExtra(recordSchema(TRANSACTION, 'in'), {
          Changes: Type.Optional(Type.Array(ChangeRecordIn)),
        }),
      ),
    ),
    images: Type.Optional(
      Type.Array(
        Type.Object({
          UUID: Type.String({
            pattern:
              '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
          }),
          Kind: Type.Union([Type.Literal('ticket'), Type.Literal('motion')]),
          SiteID: Type.Integer(),
          TransactionID: Type.Optional(Nullable(Type.Integer())),
          CameraID: Type.Optional(Nullable(Type.Integer())),
          CapturedAt: Type.Optional(Nullable(DateTimeInput)),
          ContentType: Type.String({ pattern: '^image/[a-z0-9.+-]+$' }),
          DataBase64: Type.String({ minLength: 4, maxLength: 14_000_000 }),
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
/** Checked against the schema before use; the code reads records by their interface field names. */
export type ProvisioningDocument = { [K in keyof Static<typeof ProvisioningDocument>]?: any[] };
