import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DEMO, demoDoc, expectedRegister, get, lighten } from './fixture.js';

// Issue 10: changes that touch only a link (a register moved between sensors, a role re-pointed or
// dropped, a register taken off a meter's sensor, a sensor attached to another pump) leave every
// register row as it was, yet must show on every /updates path. Each step imports such a change
// and checks every by-id /updates path of site 1 (full and light), every site-level one and the
// compact form against what the document says.

const HOUR = 3_600_000;
const ROLE_KEY = {
  meters: 'meterRegisters',
  pumps: 'pumpRegisters',
  tanks: 'tankRegisters',
} as const;
const LISTS = [
  ['meters', 'flowMeters', 'SiteFlowMeterID'],
  ['pumps', 'pumps', 'SitePumpID'],
  ['tanks', 'tankGroups', 'SiteTankGroupID'],
] as const;
const SITE_KEYS = {
  sensors: ['sensors', 'sensor', 'SiteSensorID'],
  meters: ['meters', 'meter', 'SiteFlowMeterID'],
  pumps: ['pumps', 'pump', 'SitePumpID'],
  tanks: ['tankGroups', 'tankGroup', 'SiteTankGroupID'],
} as const;

/** What one step must bring back; everything not named must come back empty. */
interface Expected {
  /** By-id sensor updates: register ids, in the order expected. */
  sensors: Record<number, string[]>;
  /** By-id meter, pump and tank updates, keyed `pumps/10401`: role -> register id or null, and sensor register ids. */
  equipment: Record<string, { roles: Record<string, string | null>; registers: string[] }>;
  /** Site-level /updates: the ids of the entries that come back, whole. */
  site: { sensors: number[]; meters: number[]; pumps: number[]; tanks: number[] };
}

describeEachBackend('configuration updates of links', (backend) => {
  let ctx: TestContext;
  let token: string;
  const t0 = Date.now();
  const doc = demoDoc();
  const site1 = <T extends { SiteID: number }>(list: T[]) => list.filter((r) => r.SiteID === 1);
  const sensor = (id: number) => doc.sensors.find((s) => s.SiteSensorID === id)!;
  const pump = (id: number) => doc.pumps.find((p) => p.SitePumpID === id)!;
  const meter = (id: number) => doc.flowMeters.find((m) => m.SiteFlowMeterID === id)!;
  const fetch = async (url: string) => {
    const { status, body } = await get(ctx, url, token);
    expect(status, url).toBe(200);
    return body;
  };
  const importAt = (hours: number) =>
    importDocument(ctx.db, doc, { now: new Date(t0 + hours * HOUR) });

  async function expectUpdates(sinceHours: number, want: Expected) {
    const q = `startDate=${encodeURIComponent(new Date(t0 + sinceHours * HOUR).toISOString())}`;
    const reg = (id: string) => expectedRegister(doc, id);
    const both = async (path: string, expected: unknown) => {
      expect(await fetch(`/v1/config/updates/${path}?${q}`), path).toEqual(expected);
      expect(await fetch(`/v1/config/updates/${path}/light?${q}`), `${path}/light`).toEqual(
        lighten(expected),
      );
    };
    for (const s of site1(doc.sensors))
      await both(`sensors/${s.SiteSensorID}`, (want.sensors[s.SiteSensorID] ?? []).map(reg));
    for (const [path, list, idField] of LISTS)
      for (const e of site1(doc[list])) {
        const w = want.equipment[`${path}/${e[idField]}`] ?? { roles: {}, registers: [] };
        const roles = Object.fromEntries(
          Object.entries(w.roles).map(([role, id]) => [role, id === null ? null : reg(id)]),
        );
        await both(`${path}/${e[idField]}`, {
          [ROLE_KEY[path]]: roles,
          sensorRegisters: w.registers.map(reg),
        });
      }

    // Site level: the changed entries come back whole, exactly as the full paths list them now.
    const site = await fetch(`/v1/config/updates/site?siteId=1&${q}`);
    const compact = await fetch(`/v1/config/updates/site/compact?siteId=1&${q}`);
    const fullCompact = await fetch('/v1/config/site/compact?siteId=1');
    for (const [path, [list, key, idField]] of Object.entries(SITE_KEYS)) {
      const ids = want.site[path as keyof Expected['site']];
      const whole = (await fetch(`/v1/config/site/${path}?siteId=1`)).filter((e: any) =>
        ids.includes(e[key][idField]),
      );
      expect(
        whole.map((e: any) => e[key][idField]),
        path,
      ).toEqual(ids);
      expect(await fetch(`/v1/config/updates/site/${path}?siteId=1&${q}`), path).toEqual(whole);
      expect(await fetch(`/v1/config/updates/site/${path}/light?siteId=1&${q}`), path).toEqual(
        lighten(whole),
      );
      expect(site[list], `site ${list}`).toEqual(whole);
      expect(compact[list], `compact ${list}`).toEqual(
        fullCompact[list].filter((e: any) => ids.includes(e[key][idField])),
      );
    }
    // Compact: every register an entry refers to, as it is now, and no other (the actuators' own aside).
    const referred = new Set<string>();
    for (const e of [
      ...compact.sensors,
      ...compact.meters,
      ...compact.pumps,
      ...compact.tankGroups,
    ])
      for (const [k, v] of Object.entries(e)) {
        if (Array.isArray(v)) v.forEach((id) => referred.add(String(id)));
        else if (k.endsWith('Registers'))
          Object.values(v as object).forEach((id) => id !== null && referred.add(String(id)));
      }
    for (const id of referred) expect(compact.registers[id], id).toEqual(lighten(reg(id)));
    expect(compact.devices).toEqual({});
  }

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO }); // stamped with the real time, before t0 + 1 h
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it('shows a register moved from one sensor to another on both sensors and on the pump that gained it', async () => {
    const before = await fetch('/v1/config/site/compact?siteId=1'); // cached before the import
    const moved = sensor(10101).RegisterIDs.shift();
    sensor(10108).RegisterIDs.push(moved); // 10108 is pump 10401's sensor
    await importAt(1);
    expect(before.registers[moved].ConnectionSensorID).toBe(10101);
    expect(
      (await fetch('/v1/config/site/compact?siteId=1')).registers[moved].ConnectionSensorID,
    ).toBe(10108);
    expect(await fetch('/v1/config/sensors/10101')).toEqual([]);
    expect(
      (await fetch('/v1/config/sensors/10108')).map((r: any) => r.SiteIODeviceRegisterID),
    ).toEqual(sensor(10108).RegisterIDs);
    // The register is shown as it is now everywhere: on 10101, the one it left, read by 10108.
    await expectUpdates(0.5, {
      sensors: { 10101: [moved], 10108: [moved] },
      equipment: { 'pumps/10401': { roles: {}, registers: [moved] } },
      site: { sensors: [10101, 10108], meters: [], pumps: [10401], tanks: [] },
    });
  });

  it('shows a register taken off a sensor with ConnectionSensorID null, on the sensor and its pump', async () => {
    const gone = sensor(10108).RegisterIDs.pop();
    await importAt(2);
    expect(expectedRegister(doc, gone).ConnectionSensorID).toBeNull();
    await expectUpdates(1.5, {
      sensors: { 10108: [gone] },
      equipment: { 'pumps/10401': { roles: {}, registers: [gone] } },
      site: { sensors: [10108], meters: [], pumps: [10401], tanks: [] },
    });
    // From before both steps: the register left 10101 too, and it is now read by no sensor.
    await expectUpdates(0.5, {
      sensors: { 10101: [gone], 10108: [gone] },
      equipment: { 'pumps/10401': { roles: {}, registers: [gone] } },
      site: { sensors: [10101, 10108], meters: [], pumps: [10401], tanks: [] },
    });
  });

  it('shows re-pointed, emptied and dropped roles, a dropped one as null', async () => {
    const p = pump(10401);
    const { Stop, ...rest } = p.Registers;
    p.Registers = { ...rest, Running: Stop, Fault: null }; // Running re-pointed, Fault emptied, Stop dropped
    const m = meter(10301);
    m.Registers = { ...m.Registers, TotalVolume: m.Registers.DayVolume }; // two roles on one register
    await importAt(3);
    const full = await fetch('/v1/config/pumps/10401');
    expect(Object.keys(full.pumpRegisters)).toEqual(['Running', 'Start', 'Frequency', 'Fault']);
    await expectUpdates(2.5, {
      sensors: {},
      equipment: {
        'pumps/10401': { roles: { Running: Stop, Fault: null, Stop: null }, registers: [] },
        'meters/10301': { roles: { TotalVolume: m.Registers.DayVolume }, registers: [] },
      },
      site: { sensors: [], meters: [10301], pumps: [10401], tanks: [] },
    });
  });

  it('shows a register moved between sensors on a role that refers to it (its ConnectionSensorID changed)', async () => {
    const role = String(meter(10302).Registers.FlowRate);
    sensor(10102).RegisterIDs.push(role);
    await importAt(4);
    await expectUpdates(3.5, {
      sensors: { 10102: [role] },
      equipment: { 'meters/10302': { roles: { FlowRate: role }, registers: [] } },
      site: { sensors: [10102], meters: [10302], pumps: [], tanks: [] },
    });
  });

  it("shows the registers of a sensor attached to another pump on both pumps, and a meter's changed SiteSensorID", async () => {
    const s = sensor(10109); // pump 10402's sensor, two registers
    s.EquipmentID = '10401';
    meter(10301).SiteSensorID = 10100; // was 10106, which stays attached to the meter by EquipmentID
    await importAt(5);
    const regs = s.RegisterIDs.map(String);
    const own = sensor(10100).RegisterIDs.map(String);
    await expectUpdates(4.5, {
      sensors: {},
      equipment: {
        'pumps/10401': { roles: {}, registers: regs },
        'pumps/10402': { roles: {}, registers: regs }, // gone: still read by 10109, which is no longer this pump's
        'meters/10301': { roles: {}, registers: own },
      },
      site: { sensors: [10109], meters: [10301], pumps: [10401, 10402], tanks: [] },
    });
    expect((await fetch('/v1/config/pumps/10402')).sensorRegisters).toEqual([]);
  });

  it('says in the OpenAPI document how a removal shows', async () => {
    const { paths } = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description = (path: string) =>
      paths[`/v1/config/updates/${path}`].get.description as string;
    expect(description('sensors/{sensorId}')).toMatch(
      /left this sensor shows its ConnectionSensorID now: another sensor, or null/,
    );
    for (const p of ['meters/{meterId}', 'pumps/{pumpId}/light', 'tanks/{tankGroupId}'])
      expect(description(p)).toMatch(/dropped or emptied one with null/);
    for (const p of ['site', 'site/sensors/light', 'site/compact'])
      expect(description(p)).toMatch(/no longer in it/);
    expect(description('site/pumps')).toMatch(/one snapshot/);
  });

  it('brings nothing back when the same document is imported again, and keeps no trace of unchanged links', async () => {
    const [{ n }] = await ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM config_link_changes',
    );
    await importAt(6);
    expect(
      (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM config_link_changes'))[0]
        .n,
    ).toBe(n);
    await expectUpdates(5.5, {
      sensors: {},
      equipment: {},
      site: { sensors: [], meters: [], pumps: [], tanks: [] },
    });
  });
});
