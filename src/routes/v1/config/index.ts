import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyTypebox } from '../../../http.js';
import { requireEquipment } from '../../../auth/access.js';
import { ConfigReader, type SiteView } from '../../../config/reader.js';
import type { EquipmentKind } from '../../../config/repository.js';
import { badRequest, forbidden, notFound } from '../../../errors.js';
import { securedErrors } from '../../../schemas/common.js';
import { parseTime } from '../../../time.js';
import {
  CompactSiteConfig,
  forSerialization,
  FULL,
  idParams,
  LIGHT,
  SiteQuery,
  SiteUpdatesQuery,
  UpdatesQuery,
} from './schema.js';
import { bodyEncoding } from './encoding.js';

// Interface §4.3: 11 paths, each with its /updates twin, and a /light variant of each but the two
// compact ones: 42 routes, generated from the two tables below.

type Dtos = typeof FULL;

/** operationIds of a path and of its /updates twin; the /light variants add "Light". */
type OperationIds = [whole: string, updates: string];

interface ByIdPath {
  path: string;
  op: OperationIds;
  param: string;
  kind: 'sensor' | EquipmentKind;
  what: string;
  response: (d: Dtos) => TSchema;
}

/** `/meters/:meterId`, `/pumps/:pumpId`, `/tanks/:tankGroupId`: an equipment's registers. */
const equipmentById = (
  kind: EquipmentKind,
  name: 'Meter' | 'Pump' | 'Tank',
  param: string,
  label: string,
  response: (d: Dtos) => TSchema,
): ByIdPath => ({
  path: `/${kind}s`,
  op: [`get${name}Registers`, `get${name}RegisterUpdates`],
  param,
  kind,
  what: `A ${label}'s role registers and sensor registers`,
  response,
});

const BY_ID: ByIdPath[] = [
  {
    path: '/sensors',
    op: ['getSensorRegisters', 'getSensorRegisterUpdates'],
    param: 'sensorId',
    kind: 'sensor',
    what: 'The registers a sensor reads',
    response: (d) => d.Registers,
  },
  equipmentById('meter', 'Meter', 'meterId', 'flow meter', (d) => d.MeterRegisters),
  equipmentById('pump', 'Pump', 'pumpId', 'pump', (d) => d.PumpRegisters),
  equipmentById('tank', 'Tank', 'tankGroupId', 'tank group', (d) => d.TankRegisters),
];

interface SitePath {
  path: string;
  op: OperationIds;
  what: string;
  light: boolean;
  response: (d: Dtos) => TSchema;
  view: SiteView;
}

const equipmentPath = (
  kind: EquipmentKind,
  list: 'meters' | 'pumps' | 'tanks',
  response: (d: Dtos) => TSchema,
): SitePath => ({
  path: `/site/${list}`,
  op: [
    `getSite${list[0].toUpperCase()}${list.slice(1)}`,
    `getSite${list[0].toUpperCase()}${list.slice(1, -1)}Updates`,
  ],
  what: `The ${kind === 'tank' ? 'tank group' : kind === 'meter' ? 'flow meter' : kind}s of a site, each with its role and sensor registers`,
  light: true,
  response,
  view: list,
});

const SITE: SitePath[] = [
  {
    path: '/site/sensors',
    op: ['getSiteSensors', 'getSiteSensorUpdates'],
    what: 'The sensors of a site, each with its registers',
    light: true,
    response: (d) => d.SensorConfigs,
    view: 'sensors',
  },
  equipmentPath('meter', 'meters', (d) => d.MeterConfigs),
  equipmentPath('pump', 'pumps', (d) => d.PumpConfigs),
  equipmentPath('tank', 'tanks', (d) => d.TankConfigs),
  {
    path: '/site/actuators',
    op: ['getSiteActuators', 'getSiteActuatorUpdates'],
    what: 'The actuators of a site with their scalings, triggers and tank-group connections (always all of them)',
    light: true,
    response: (d) => d.ActuatorEntries,
    view: 'actuators',
  },
  {
    path: '/site',
    op: ['getSiteConfig', 'getSiteConfigUpdates'],
    what: "A site's whole configuration",
    light: true,
    response: (d) => d.SiteConfig,
    view: 'site',
  },
  {
    path: '/site/compact',
    op: ['getSiteCompactConfig', 'getSiteCompactConfigUpdates'],
    what: "A site's whole configuration, registers once each and referred to by id",
    light: false,
    response: () => CompactSiteConfig,
    view: 'compact',
  },
];

const UPDATES_NOTE =
  'Updates: only equipment whose own record, registers (or their Modbus devices), sensors or links changed at or after startDate, ' +
  'each whole and as it is now, so a register or role that left it is simply no longer in it (a link change: a register moved to ' +
  'another sensor or taken off one, a role re-pointed or dropped, a sensor attached elsewhere); deleted registers and Delete ' +
  'actuators included, flagged; actuators always in full.';
const CHANGED_REGISTERS =
  'Updates: only what changed at or after startDate, possibly nothing: registers that changed (themselves or their Modbus device), ' +
  'registers whose link to this equipment changed (joined it, moved in its list, now read by another sensor), and registers that ' +
  'left it, listed after the others by id as they are now.';
const EQUIPMENT_UPDATES_NOTE =
  `${CHANGED_REGISTERS} In sensorRegisters, one that left is read by another sensor or none (ConnectionSensorID), or its sensor ` +
  "was attached elsewhere (that sensor's EquipmentID says where). In the role map, a re-pointed role comes with its new register, " +
  'a dropped or emptied one with null.';
const BY_ID_UPDATES_NOTE: Record<ByIdPath['kind'], string> = {
  sensor: `${CHANGED_REGISTERS} A register that left this sensor shows its ConnectionSensorID now: another sensor, or null.`,
  meter: EQUIPMENT_UPDATES_NOTE,
  pump: EQUIPMENT_UPDATES_NOTE,
  tank: EQUIPMENT_UPDATES_NOTE,
};
const LIGHT_NOTE =
  'Light: null properties left out of every record, and the heavy actuator fields too.';
const SNAPSHOT_NOTE =
  'Read from one snapshot of the database: never a mix of the states before and after an import.';

function routeSchema(
  def: { op: OperationIds; what: string; response: (d: Dtos) => TSchema },
  updatesNote: string,
  light: boolean,
  input: object,
  errors: Record<number, TSchema>,
) {
  return {
    operationId: `${def.op[updatesNote ? 1 : 0]}${light ? 'Light' : ''}`,
    tags: ['configuration'],
    summary: `${def.what}${updatesNote ? ', changed since startDate' : ''}${light ? ' (light)' : ''}`,
    description: [updatesNote, light ? LIGHT_NOTE : '', SNAPSHOT_NOTE].filter(Boolean).join(' '),
    ...input,
    response: { 200: forSerialization(def.response(light ? LIGHT : FULL)), ...errors },
  };
}

/** The updates cut-off in ms; 400 when startDate is not an ISO 8601 date-time. */
function cutOff(startDate: string): number {
  const t = parseTime(startDate);
  if (t === undefined)
    throw badRequest('startDate is not an ISO 8601 date-time', [
      { path: '/startDate', message: 'must be an ISO 8601 date-time' },
    ]);
  return t;
}

export async function configRoutes(app: FastifyTypebox): Promise<void> {
  const reader = new ConfigReader();
  const variants = (light: boolean) =>
    [false, true].flatMap((updates) =>
      (light ? [false, true] : [false]).map((l) => ({ updates, light: l })),
    );

  for (const def of BY_ID)
    for (const { updates, light } of variants(true)) {
      const url = `${updates ? '/updates' : ''}${def.path}/:${def.param}${light ? '/light' : ''}`;
      const input = {
        params: idParams(def.param),
        ...(updates ? { querystring: UpdatesQuery } : {}),
      };
      app.get(
        url,
        {
          schema: routeSchema(
            def,
            updates ? BY_ID_UPDATES_NOTE[def.kind] : '',
            light,
            input,
            securedErrors(403, 404),
          ),
        },
        async (request: FastifyRequest) => {
          const id = (request.params as Record<string, number>)[def.param];
          const since = updates ? cutOff((request.query as { startDate: string }).startDate) : null;
          const siteId = (await requireEquipment(request.db, request.access!, def.kind, [id])).get(
            id,
          )!;
          if (def.kind === 'sensor')
            return reader.sensorRegisters(request.db, id, siteId, since, light);
          const body = await reader.equipmentRegisters(
            request.db,
            def.kind,
            id,
            siteId,
            since,
            light,
          );
          if (!body) throw notFound(`${def.kind} ${id} does not exist`);
          return body;
        },
      );
    }

  for (const def of SITE)
    for (const { updates, light } of variants(def.light)) {
      const url = `${updates ? '/updates' : ''}${def.path}${light ? '/light' : ''}`;
      const input = { querystring: updates ? SiteUpdatesQuery : SiteQuery };
      app.get(
        url,
        { schema: routeSchema(def, updates ? UPDATES_NOTE : '', light, input, securedErrors(403)) },
        async (request: FastifyRequest, reply: FastifyReply) => {
          const q = request.query as { siteId: number; startDate?: string };
          const since = updates ? cutOff(q.startDate!) : null;
          request.access!.assertSites([q.siteId]);
          const read = await reader.siteView(request.db, q.siteId, def.view, {
            light,
            since,
            serialize: (v) => reply.serialize(v) as string,
          });
          // A site that does not exist answers like one out of reach: the same 403 for every client.
          if (!read) throw forbidden('no access to one or more of the requested sites');
          if ('value' in read) return read.value;
          // Whole-site bodies run to megabytes: sent gzipped to a client that asks for it.
          const encoding = bodyEncoding(request.headers['accept-encoding']);
          reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
          if (encoding === 'gzip') reply.header('content-encoding', 'gzip');
          return reply.send(await read.body.encoded(encoding));
        },
      );
    }
}
