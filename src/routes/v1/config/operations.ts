import type { TSchema } from '@sinclair/typebox';
import type { SiteView } from '../../../config/reader.js';
import { EQUIPMENT, type TelemetryKind } from '../../../equipment.js';
import { CompactSiteConfig, FULL, LIGHT } from './schema.js';
import { forSerialization } from './serialization.js';

// What the OpenAPI document says of each configuration path: its operationIds, summary,
// description and response DTO. A kind's are named from the registry (EQUIPMENT[kind].nameStem).

type Dtos = typeof FULL;

export interface PathDoc {
  /** operationIds of the path and of its /updates twin; the /light variants add "Light". */
  op: [whole: string, updates: string];
  what: string;
  updatesNote: string;
  response: (d: Dtos) => TSchema;
}

const UPDATES_NOTE =
  'Updates: only equipment whose own record, registers (or their Modbus devices), sensors or links changed at or after startDate, ' +
  'each whole and as it is now, so a register or role that left it is simply no longer in it (a link change: a register moved to ' +
  'another sensor or taken off one, a role re-pointed or dropped, a sensor attached elsewhere); deleted registers and Delete ' +
  'actuators included, flagged; actuators always in full.';
const CHANGED_REGISTERS =
  'Updates: only what changed at or after startDate, possibly nothing: registers that changed (themselves or their Modbus device), ' +
  'registers whose link to this equipment changed (joined it, moved in its list, now read by another sensor), and registers that ' +
  'left it, listed after the others by id as they are now.';
const SENSOR_UPDATES_NOTE = `${CHANGED_REGISTERS} A register that left this sensor shows its ConnectionSensorID now: another sensor, or null.`;
const EQUIPMENT_UPDATES_NOTE =
  `${CHANGED_REGISTERS} In sensorRegisters, one that left is read by another sensor or none (ConnectionSensorID), or its sensor ` +
  "was attached elsewhere (that sensor's EquipmentID says where). In the role map, a re-pointed role comes with its new register, " +
  'a dropped or emptied one with null.';
const LIGHT_NOTE =
  'Light: null properties left out of every record, and the heavy actuator fields too.';
const SNAPSHOT_NOTE =
  'Read from one snapshot of the database: never a mix of the states before and after an import.';

/**
 * A kind's two paths: `/<path>/:<param>`, a sensor's registers or a meter's, pump's or tank
 * group's; and `/site/<path>`, the site's list of that kind.
 */
function kindDocs(kind: TelemetryKind): { byId: PathDoc; list: PathDoc } {
  const { label, nameStem } = EQUIPMENT[kind];
  const sensor = kind === 'sensor';
  return {
    byId: {
      op: [`get${nameStem}Registers`, `get${nameStem}RegisterUpdates`],
      what: sensor
        ? 'The registers a sensor reads'
        : `A ${label}'s role registers and sensor registers`,
      updatesNote: sensor ? SENSOR_UPDATES_NOTE : EQUIPMENT_UPDATES_NOTE,
      response: (d) => (kind === 'sensor' ? d.Registers : d.byKind[kind].registers),
    },
    list: {
      op: [`getSite${nameStem}s`, `getSite${nameStem}Updates`],
      what: sensor
        ? 'The sensors of a site, each with its registers'
        : `The ${label}s of a site, each with its role and sensor registers`,
      updatesNote: UPDATES_NOTE,
      response: (d) => (kind === 'sensor' ? d.SensorConfigs : d.byKind[kind].configs),
    },
  };
}

export const byIdDoc = (kind: TelemetryKind): PathDoc => kindDocs(kind).byId;

const WHOLE_SITE_VIEWS: Record<Exclude<SiteView, TelemetryKind>, PathDoc> = {
  actuators: {
    op: ['getSiteActuators', 'getSiteActuatorUpdates'],
    what: 'The actuators of a site with their scalings, triggers and tank-group connections (always all of them)',
    updatesNote: UPDATES_NOTE,
    response: (d) => d.ActuatorEntries,
  },
  site: {
    op: ['getSiteConfig', 'getSiteConfigUpdates'],
    what: "A site's whole configuration",
    updatesNote: UPDATES_NOTE,
    response: (d) => d.SiteConfig,
  },
  compact: {
    op: ['getSiteCompactConfig', 'getSiteCompactConfigUpdates'],
    what: "A site's whole configuration, registers once each and referred to by id",
    updatesNote: UPDATES_NOTE,
    response: () => CompactSiteConfig,
  },
};

const isWholeSite = (view: SiteView): view is keyof typeof WHOLE_SITE_VIEWS =>
  view in WHOLE_SITE_VIEWS;

/** `/site/…`: the list of one kind, the actuators, the whole site or its compact form. */
export const siteViewDoc = (view: SiteView): PathDoc =>
  isWholeSite(view) ? WHOLE_SITE_VIEWS[view] : kindDocs(view).list;

/** A route's schema: its documentation, `input` (params, querystring) and the response DTOs. */
export function routeSchema<Input extends object>(
  doc: PathDoc,
  variant: { updates: boolean; light: boolean },
  input: Input,
  errors: Record<number, TSchema>,
) {
  const { updates, light } = variant;
  return {
    operationId: `${doc.op[updates ? 1 : 0]}${light ? 'Light' : ''}`,
    tags: ['configuration'],
    summary: `${doc.what}${updates ? ', changed since startDate' : ''}${light ? ' (light)' : ''}`,
    description: [updates ? doc.updatesNote : '', light ? LIGHT_NOTE : '', SNAPSHOT_NOTE]
      .filter(Boolean)
      .join(' '),
    ...input,
    response: { 200: forSerialization(doc.response(light ? LIGHT : FULL)), ...errors },
  };
}
