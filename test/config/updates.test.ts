import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DEMO, demoDoc, expectedRegister, get, IDS } from './fixture.js';

// Contract §5: /updates?startDate=T answers only what changed at or after T. Each step imports a
// changed document with a later stamp and checks that exactly the changed things come back.

const HOUR = 3_600_000;
const ids = (list: any[], key: string, field: string) => list.map((e) => e[key][field]);

describeEachBackend('configuration updates', (backend) => {
  let ctx: TestContext;
  let token: string;
  const t0 = Date.now();
  const at = (hours: number) => new Date(t0 + hours * HOUR);
  const doc = demoDoc();
  const fetch = async (url: string) => {
    const { status, body } = await get(ctx, url, token);
    expect(status, url).toBe(200);
    return body;
  };
  const since = (hours: number) => encodeURIComponent(at(hours).toISOString());
  const regOf = (sensorId: number, i = 0) =>
    String(doc.sensors.find((s) => s.SiteSensorID === sensorId)!.RegisterIDs[i]);
  const findRegister = (id: string) =>
    doc.registers.find((r) => String(r.SiteIODeviceRegisterID) === id)!;
  const pump2 = () => doc.pumps.find((p) => p.SitePumpID === IDS.pump2)!;

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO }); // stamped with the real time, before t0 + 1 h
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it('before any change: nothing but the actuators, which always come in full', async () => {
    const body = await fetch(`/v1/config/updates/site?siteId=1&startDate=${since(0.5)}`);
    expect(body).toMatchObject({ devices: [], sensors: [], meters: [], pumps: [], tankGroups: [] });
    expect(body.actuators).toEqual(await fetch('/v1/config/site/actuators?siteId=1'));
    expect(
      await fetch(`/v1/config/updates/site/actuators?siteId=1&startDate=${since(1000)}`),
    ).toHaveLength(1);
    // A startDate before the import: everything.
    expect(
      await fetch(`/v1/config/updates/site/sensors?siteId=1&startDate=2000-01-01T00:00Z`),
    ).toEqual(await fetch('/v1/config/site/sensors?siteId=1'));
  });

  it('after changing two registers and one pump, exactly those come back', async () => {
    const before = await fetch('/v1/config/site/compact?siteId=1'); // fills the cache of whole-site reads
    const a = regOf(10101); // read by a sensor attached to nothing
    const b = String(pump2().Registers.Running); // a role register of the other pump
    findRegister(a).Name = 'renamed A';
    findRegister(b).ScalingDividerValue = 1000;
    doc.pumps.find((p) => p.SitePumpID === IDS.pump)!.MaximumFlow = 15_000;
    await importDocument(ctx.db, doc, { now: at(1) });
    const q = `startDate=${since(0.5)}`;

    expect(await fetch(`/v1/config/updates/sensors/10101?${q}`)).toEqual([
      expectedRegister(doc, a),
    ]);
    expect(await fetch(`/v1/config/updates/sensors/${IDS.sensor}?${q}`)).toEqual([]);
    expect(await fetch(`/v1/config/updates/pumps/${IDS.pump2}?${q}`)).toEqual({
      pumpRegisters: { Running: expectedRegister(doc, b) },
      sensorRegisters: [],
    });
    expect(await fetch(`/v1/config/updates/pumps/${IDS.pump}?${q}`)).toEqual({
      pumpRegisters: {},
      sensorRegisters: [],
    });
    expect(await fetch(`/v1/config/updates/meters/${IDS.meter}?${q}`)).toEqual({
      meterRegisters: {},
      sensorRegisters: [],
    });
    expect(await fetch(`/v1/config/updates/tanks/${IDS.tank}/light?${q}`)).toEqual({
      tankRegisters: {},
      sensorRegisters: [],
    });

    expect(
      ids(await fetch(`/v1/config/updates/site/sensors?siteId=1&${q}`), 'sensor', 'SiteSensorID'),
    ).toEqual([10101]);
    const pumps = await fetch(`/v1/config/updates/site/pumps?siteId=1&${q}`);
    expect(ids(pumps, 'pump', 'SitePumpID')).toEqual([IDS.pump, IDS.pump2]);
    expect(pumps[0].pump.MaximumFlow).toBe(15_000);
    expect(pumps[1].pumpRegisters.Running.ScalingDividerValue).toBe(1000);
    expect(await fetch(`/v1/config/updates/site/meters?siteId=1&${q}`)).toEqual([]);
    expect(await fetch(`/v1/config/updates/site/tanks/light?siteId=1&${q}`)).toEqual([]);

    const site = await fetch(`/v1/config/updates/site?siteId=1&${q}`);
    expect(site.devices).toEqual([]);
    expect(ids(site.sensors, 'sensor', 'SiteSensorID')).toEqual([10101]);
    expect(ids(site.pumps, 'pump', 'SitePumpID')).toEqual([IDS.pump, IDS.pump2]);
    expect([site.meters, site.tankGroups]).toEqual([[], []]);
    expect(site.actuators).toHaveLength(1);

    const compact = await fetch(`/v1/config/updates/site/compact?siteId=1&${q}`);
    expect(compact.devices).toEqual({});
    expect(ids(compact.sensors, 'sensor', 'SiteSensorID')).toEqual([10101]);
    expect(ids(compact.pumps, 'pump', 'SitePumpID')).toEqual([IDS.pump, IDS.pump2]);
    expect(compact.registers[a].Name).toBe('renamed A');
    expect(compact.registers[b].ScalingDividerValue).toBe(1000);
    expect(compact.registers[regOf(IDS.sensor)]).toBeUndefined(); // not referred to by anything returned

    // Whole-site reads see the change at once (the cache notices the import).
    const after = await fetch('/v1/config/site/compact?siteId=1');
    expect(before.registers[a].Name).not.toBe('renamed A');
    expect(after.registers[a].Name).toBe('renamed A');
    expect(after.pumps[0].pump.MaximumFlow).toBe(15_000);
    // A later startDate: nothing again.
    expect(await fetch(`/v1/config/updates/site/pumps?siteId=1&startDate=${since(1.5)}`)).toEqual(
      [],
    );
  });

  it('keeps a deleted register and a Delete actuator visible, flagged', async () => {
    const c = regOf(10102);
    findRegister(c).Deleted = true;
    doc.actuators.find((x) => x.SiteActuatorID === IDS.actuator)!.Delete = true;
    await importDocument(ctx.db, doc, { now: at(2) });
    const q = `startDate=${since(1.5)}`;
    expect(await fetch(`/v1/config/updates/sensors/10102?${q}`)).toEqual([
      { ...expectedRegister(doc, c), Deleted: true },
    ]);
    expect(
      ids(
        await fetch(`/v1/config/updates/site/sensors/light?siteId=1&${q}`),
        'sensor',
        'SiteSensorID',
      ),
    ).toEqual([10102]);
    const actuators = await fetch(`/v1/config/updates/site/actuators?siteId=1&${q}`);
    expect(actuators.map((x: any) => [x.actuator.SiteActuatorID, x.actuator.Delete])).toEqual([
      [IDS.actuator, true],
    ]);
    const full = await fetch('/v1/config/site/sensors?siteId=1');
    expect(full.find((s: any) => s.sensor.SiteSensorID === 10102).sensorRegisters[0]).toMatchObject(
      { SiteIODeviceRegisterID: c, Deleted: true },
    );
    expect((await fetch('/v1/config/site/compact?siteId=1')).actuators[0].actuator.Delete).toBe(
      true,
    );
  });

  it('counts a changed Modbus device as a change of every register on it', async () => {
    doc.modbusDevices.find((d) => d.SiteModbusInOutDeviceID === 10002)!.DeviceName = 'RTU-1b';
    await importDocument(ctx.db, doc, { now: at(3) });
    const q = `startDate=${since(2.5)}`;
    const site = await fetch(`/v1/config/updates/site?siteId=1&${q}`);
    expect(site.devices.map((d: any) => [d.SiteModbusInOutDeviceID, d.DeviceName])).toEqual([
      [10002, 'RTU-1b'],
    ]);
    const onDevice = new Set(
      doc.registers
        .filter((r) => r.SiteModbusInOutDeviceID === 10002)
        .map((r) => String(r.SiteIODeviceRegisterID)),
    );
    const expectedSensors = doc.sensors
      .filter((s) => s.SiteID === 1 && s.RegisterIDs.some((r: unknown) => onDevice.has(String(r))))
      .map((s) => s.SiteSensorID);
    expect(ids(site.sensors, 'sensor', 'SiteSensorID')).toEqual(expectedSensors);
    const regs = await fetch(`/v1/config/updates/sensors/${IDS.sensor}?${q}`);
    expect(regs.map((r: any) => r.SiteIODeviceRegisterID)).toEqual([regOf(IDS.sensor, 1)]);
    expect(regs[0]).toMatchObject({
      SiteModbusInOutDevices: { DeviceName: 'RTU-1b', SlaveAddress: 2 },
      ConnectionName: 'RTU-1b',
    });
    expect(
      Object.keys((await fetch(`/v1/config/updates/site/compact?siteId=1&${q}`)).devices),
    ).toEqual(['10002']);
  });
});
