import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DEMO, demoDoc, expectedRegister, get, IDS, sensorRegisterIds } from './fixture.js';

// Field by field: what the configuration paths answer, checked against the provisioning document
// that was imported (records, derived register fields, orders, role maps, compact dedup).

const without = (r: Record<string, any>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k)));
const stripNulls = (r: Record<string, any>) =>
  Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null));
const KIND = {
  meter: {
    list: 'flowMeters',
    id: 'SiteFlowMeterID',
    type: 1,
    key: 'meter',
    roles: 'meterRegisters',
    path: 'meters',
  },
  pump: {
    list: 'pumps',
    id: 'SitePumpID',
    type: 2,
    key: 'pump',
    roles: 'pumpRegisters',
    path: 'pumps',
  },
  tank: {
    list: 'tankGroups',
    id: 'SiteTankGroupID',
    type: 3,
    key: 'tankGroup',
    roles: 'tankRegisters',
    path: 'tanks',
  },
} as const;

describeEachBackend('configuration content', (backend) => {
  let ctx: TestContext;
  let token: string;
  const doc = demoDoc();
  const of = (list: string, site = 1) =>
    doc[list]
      .filter((r) => r.SiteID === site)
      .sort((a: any, b: any) => a[Object.keys(a)[0]] - b[Object.keys(b)[0]]);
  const reg = (id: unknown) => expectedRegister(doc, String(id));
  const fetch = async (url: string) => {
    const { status, body } = await get(ctx, url, token);
    expect(status, url).toBe(200);
    return body;
  };
  /** The expected entry parts of a meter, pump or tank group of the document. */
  const expectedEntry = (kind: keyof typeof KIND, e: any) => {
    const k = KIND[kind];
    const roles = Object.fromEntries(
      Object.entries(e.Registers).map(([role, id]) => [role, id === null ? null : reg(id)]),
    );
    const sensors = sensorRegisterIds(
      doc,
      k.type,
      e[k.id],
      kind === 'meter' ? e.SiteSensorID : undefined,
    ).map(reg);
    return { record: without(e, 'Registers'), roles, sensors };
  };

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it("answers a sensor's registers in its order, with the derived device and connection fields", async () => {
    const sensor = doc.sensors.find((s) => s.SiteSensorID === IDS.sensor)!;
    expect(sensor.RegisterIDs.length).toBe(2);
    const body = await fetch(`/v1/config/sensors/${IDS.sensor}`);
    expect(body).toEqual(sensor.RegisterIDs.map(reg));
    expect(body[0]).toMatchObject({
      ConnectionSensorID: IDS.sensor,
      ConnectionName: 'PLC-1',
      ConnectionSlaveAddress: 1,
      BitIndex: null,
    });
    expect(typeof body[0].SiteIODeviceRegisterID).toBe('string');
  });

  it('answers role maps (null for an unconfigured role) and sensor registers of meters, pumps and tank groups', async () => {
    for (const [kind, id] of [
      ['meter', IDS.meter],
      ['pump', IDS.pump],
      ['pump', IDS.pump2],
      ['tank', IDS.tank],
    ] as const) {
      const k = KIND[kind];
      const e = expectedEntry(
        kind,
        doc[k.list].find((x) => x[k.id] === id),
      );
      const body = await fetch(`/v1/config/${k.path}/${id}`);
      expect(body, `${kind} ${id}`).toEqual({ [k.roles]: e.roles, sensorRegisters: e.sensors });
      expect(Object.keys(body[k.roles])).toEqual(Object.keys(e.roles)); // role order as provisioned
      expect(e.sensors.length, `${kind} ${id} has sensor registers`).toBeGreaterThan(0);
    }
    expect((await fetch(`/v1/config/meters/${IDS.meter}`)).meterRegisters.Reset).toBeNull();
    expect((await fetch(`/v1/config/pumps/${IDS.pump2}`)).pumpRegisters.Frequency).toBeNull();
  });

  it('answers the site lists ordered by id, each record with every interface field', async () => {
    const sensors = await fetch('/v1/config/site/sensors?siteId=1');
    expect(sensors).toEqual(
      of('sensors').map((s) => ({
        sensor: without(s, 'RegisterIDs'),
        sensorRegisters: s.RegisterIDs.map(reg),
      })),
    );
    expect(Object.keys(sensors[0].sensor)).toHaveLength(16);
    for (const kind of ['meter', 'pump', 'tank'] as const) {
      const k = KIND[kind];
      const body = await fetch(`/v1/config/site/${k.path}?siteId=1`);
      const expected = of(k.list).map((x) => {
        const e = expectedEntry(kind, x);
        return { [k.key]: e.record, [k.roles]: e.roles, sensorRegisters: e.sensors };
      });
      expect(body, kind).toEqual(expected);
      expect(body.length).toBe(2);
    }
  });

  it('answers actuator entries with their scalings, triggers and tank-group connections', async () => {
    const body = await fetch('/v1/config/site/actuators?siteId=1');
    const expected = of('actuators').map((a) => ({
      actuator: without(a, 'SensorScalings', 'SensorTriggers', 'TankGroupConnections'),
      sensorScalings: a.SensorScalings,
      sensorTriggers: a.SensorTriggers,
      tankGroupConnections: a.TankGroupConnections,
    }));
    expect(body).toEqual(expected);
    expect(body[0].actuator.LastClosed).toBe('2026-05-31T12:00:00.000Z');
    expect(body[0].actuator.DigitalOpenValveRegisterID).toMatch(/^\d+$/);
    expect(body[0].sensorScalings[0].ScalePoints).toEqual([
      { F: 0, V: 4 },
      { F: 50, V: 12 },
      { F: 100, V: 20 },
    ]);
  });

  it('answers the whole site configuration: site, devices and the same entries as the list paths', async () => {
    const body = await fetch('/v1/config/site?siteId=1');
    expect(Object.keys(body)).toEqual([
      'site',
      'devices',
      'sensors',
      'meters',
      'pumps',
      'tankGroups',
      'actuators',
    ]);
    expect(body.site).toEqual({ ...without(doc.sites[0]), CompanyName: 'Permian Water Services' });
    expect(body.devices).toEqual(
      of('modbusDevices').map((d) => ({ ...d, LastCommunication: null })),
    );
    expect(body.sensors).toEqual(await fetch('/v1/config/site/sensors?siteId=1'));
    expect(body.meters).toEqual(await fetch('/v1/config/site/meters?siteId=1'));
    expect(body.pumps).toEqual(await fetch('/v1/config/site/pumps?siteId=1'));
    expect(body.tankGroups).toEqual(await fetch('/v1/config/site/tanks?siteId=1'));
    expect(body.actuators).toEqual(await fetch('/v1/config/site/actuators?siteId=1'));
    // Another site answers its own equipment only.
    const other = await fetch('/v1/config/site?siteId=2');
    expect(other.sensors.every((s: any) => s.sensor.SiteID === 2)).toBe(true);
    expect(other.devices.map((d: any) => d.SiteModbusInOutDeviceID)).toEqual([20001, 20002]);
  });

  it('answers the compact configuration: registers once each by id, null-free; role maps of numeric ids', async () => {
    const body = await fetch('/v1/config/site/compact?siteId=1');
    expect(Object.keys(body)).toEqual([
      'devices',
      'registers',
      'sensors',
      'meters',
      'pumps',
      'tankGroups',
      'actuators',
    ]);
    expect(body.devices).toEqual(
      Object.fromEntries(
        of('modbusDevices').map((d) => [
          String(d.SiteModbusInOutDeviceID),
          { ...d, LastCommunication: null },
        ]),
      ),
    );
    expect(body.sensors).toEqual(
      of('sensors').map((s) => ({
        sensor: without(s, 'RegisterIDs'),
        registerIds: s.RegisterIDs.map(String),
      })),
    );
    const referenced = new Set<string>(of('sensors').flatMap((s) => s.RegisterIDs.map(String)));
    for (const kind of ['meter', 'pump', 'tank'] as const) {
      const k = KIND[kind];
      const list = body[kind === 'tank' ? 'tankGroups' : `${kind}s`];
      expect(list, kind).toEqual(
        of(k.list).map((x) => ({
          [k.key]: without(x, 'Registers'),
          [k.roles]: Object.fromEntries(
            Object.entries(x.Registers).map(([role, id]) => [
              role,
              id === null ? null : Number(id),
            ]),
          ),
          sensorRegisterIds: sensorRegisterIds(
            doc,
            k.type,
            x[k.id],
            kind === 'meter' ? x.SiteSensorID : undefined,
          ),
        })),
      );
      for (const x of of(k.list))
        for (const id of Object.values(x.Registers)) if (id !== null) referenced.add(String(id));
    }
    for (const a of of('actuators'))
      for (const [f, v] of Object.entries(a))
        if (f.endsWith('RegisterID') && v !== null) referenced.add(String(v));
    expect(Object.keys(body.registers).sort()).toEqual([...referenced].sort());
    for (const [id, r] of Object.entries(body.registers))
      expect(r, id).toEqual(stripNulls(reg(id)));
    expect(JSON.stringify(body.registers)).not.toContain('null');
    expect(typeof body.pumps[0].pumpRegisters.Running).toBe('number');
    expect(body.pumps[1].pumpRegisters.Frequency).toBeNull();
    expect(body.actuators).toEqual(await fetch('/v1/config/site/actuators?siteId=1'));
  });
});
