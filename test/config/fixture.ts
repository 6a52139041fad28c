import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { generateDemo as generate } from '../../src/provisioning/demo.js';
import { CompactSiteConfig, FULL, LIGHT } from '../../src/routes/v1/config/schema.js';
import { bearer, type TestContext } from '../helper.js';

// Shared by the configuration suites: the demo they import, every one of the 42 paths, a strict
// shape check, and the expected records computed from the provisioning document itself.

export const DEMO = {
  now: new Date('2026-06-01T12:00:00Z'),
  sites: 3,
  transactionsPerSite: 0,
  imagesPerSite: 0,
};
export const demoDoc = () => generate(DEMO) as Record<string, any[]>;

/** Site 1 of the demo: ids are siteId * 10000 + n. */
export const IDS = {
  site: 1,
  sensor: 10100,
  meter: 10301,
  pump: 10401,
  pump2: 10402,
  tank: 10501,
  actuator: 10601,
};

export interface RouteCase {
  url: string;
  byId: boolean;
  updates: boolean;
  light: boolean;
  schema: TSchema;
}

type Dtos = typeof FULL;
const BY_ID: [string, number, (d: Dtos) => TSchema][] = [
  ['sensors', IDS.sensor, (d) => d.Registers],
  ['meters', IDS.meter, (d) => d.byKind.meter.registers],
  ['pumps', IDS.pump, (d) => d.byKind.pump.registers],
  ['tanks', IDS.tank, (d) => d.byKind.tank.registers],
];
const SITE: [string, (d: Dtos) => TSchema][] = [
  ['site/sensors', (d) => d.SensorConfigs],
  ['site/meters', (d) => d.byKind.meter.configs],
  ['site/pumps', (d) => d.byKind.pump.configs],
  ['site/tanks', (d) => d.byKind.tank.configs],
  ['site/actuators', (d) => d.ActuatorEntries],
  ['site', (d) => d.SiteConfig],
];
export const START = '2000-01-01T00:00:00Z';

/** All 42 routes of interface §4.3, with the ids of site 1 (`ids` overrides the path id, `siteId` the site). */
export function allRoutes(
  opts: { id?: number; siteId?: number; startDate?: string | null } = {},
): RouteCase[] {
  const site = opts.siteId ?? IDS.site;
  const start = opts.startDate === undefined ? START : opts.startDate;
  const q = (updates: boolean, first: string) =>
    updates && start !== null ? `${first}startDate=${encodeURIComponent(start)}` : '';
  const out: RouteCase[] = [];
  for (const updates of [false, true])
    for (const light of [false, true]) {
      const pre = `/v1/config${updates ? '/updates' : ''}`;
      const suf = light ? '/light' : '';
      const dtos = light ? LIGHT : FULL;
      for (const [p, id, schema] of BY_ID)
        out.push({
          url: `${pre}/${p}/${opts.id ?? id}${suf}${q(updates, '?')}`,
          byId: true,
          updates,
          light,
          schema: schema(dtos),
        });
      for (const [p, schema] of SITE)
        out.push({
          url: `${pre}/${p}${suf}?siteId=${site}${q(updates, '&')}`,
          byId: false,
          updates,
          light,
          schema: schema(dtos),
        });
      if (!light)
        out.push({
          url: `${pre}/site/compact?siteId=${site}${q(updates, '&')}`,
          byId: false,
          updates,
          light,
          schema: CompactSiteConfig,
        });
    }
  return out;
}

/** The schema with every object closed (no property beyond those listed), so extra fields fail too. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema))
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)]))
        : closed(v);
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}
const ajv = new Ajv({ allErrors: false, strict: false });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const compiled = new Map<TSchema, ReturnType<Ajv['compile']>>();
export function expectShape(body: unknown, schema: TSchema, label = ''): void {
  let validate = compiled.get(schema);
  if (!validate)
    compiled.set(
      schema,
      (validate = ajv.compile(closed(JSON.parse(JSON.stringify(schema))) as object)),
    );
  const ok = validate(body);
  expect(ok ? null : `${label} ${ajv.errorsText(validate.errors)}`).toBe(null);
}

export async function get(ctx: TestContext, url: string, token?: string) {
  const res = await ctx.app.inject({ method: 'GET', url, headers: token ? bearer(token) : {} });
  return { status: res.statusCode, body: res.json() as any };
}

const ROLE_MAPS = new Set(['meterRegisters', 'pumpRegisters', 'tankRegisters']);
export const HEAVY = [
  'LoggingEnabled',
  'CurrentValvePosition',
  'LastClosed',
  'LastOpened',
  'DesignTypeID',
  'Latitude',
  'Longitude',
  'CustomIconURL',
];
/** What the light variant must be, derived from a full body: nulls gone (not a role map's), heavy actuator fields gone. */
export function lighten(v: any, key?: string): any {
  if (Array.isArray(v)) return v.map((x) => lighten(x));
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null && !ROLE_MAPS.has(key!)) continue;
    if (key === 'actuator' && HEAVY.includes(k)) continue;
    out[k] = lighten(x, k);
  }
  return out;
}

/** Interface §2.1 field names, in its order. */
export const REGISTER_FIELDS = [
  'SiteIODeviceRegisterID',
  'SiteModbusInOutDeviceID',
  'Register',
  'RegisterDataType',
  'RegisterSize',
  'RegisterClassification',
  'RegisterAccessType',
  'BitIndex',
  'ScalingMultiplierValue',
  'ScalingDividerValue',
  'ScalingEquation',
  'WriteScalingEquation',
  'Units',
  'UnitID',
  'Name',
  'Description',
  'Deleted',
  'SiteModbusInOutDevices',
  'ConnectionName',
  'ConnectionSlaveAddress',
  'ConnectionSensorID',
];

/** The full register the API must answer for a register of the document: its fields plus the derived ones. */
export function expectedRegister(doc: Record<string, any[]>, id: string): Record<string, unknown> {
  const r = doc.registers.find((x) => String(x.SiteIODeviceRegisterID) === id);
  if (!r) throw new Error(`register ${id} not in the document`);
  const device = doc.modbusDevices.find(
    (d) => d.SiteModbusInOutDeviceID === r.SiteModbusInOutDeviceID,
  );
  const sensor = doc.sensors.find((s) => s.RegisterIDs.map(String).includes(id));
  const out: Record<string, unknown> = {};
  for (const f of REGISTER_FIELDS) out[f] = r[f] ?? null;
  out.SiteIODeviceRegisterID = id;
  out.SiteModbusInOutDevices = { DeviceName: device.DeviceName, SlaveAddress: device.SlaveAddress };
  out.ConnectionName = sensor ? device.DeviceName : null;
  out.ConnectionSlaveAddress = sensor ? device.SlaveAddress : null;
  out.ConnectionSensorID = sensor ? sensor.SiteSensorID : null;
  return out;
}

/** Ids of the registers read by the sensors attached to an equipment (type code 1 meter, 2 pump, 3 tank), sensors by id. */
export function sensorRegisterIds(
  doc: Record<string, any[]>,
  typeId: number,
  id: number,
  extraSensor?: number,
): string[] {
  return doc.sensors
    .filter(
      (s) =>
        (s.EquipmentTypeID === typeId && String(s.EquipmentID) === String(id)) ||
        s.SiteSensorID === extraSensor,
    )
    .sort((a, b) => a.SiteSensorID - b.SiteSensorID)
    .flatMap((s) => s.RegisterIDs.map(String));
}
