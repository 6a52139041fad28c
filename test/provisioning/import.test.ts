import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { generateDemo as generate, type DemoOptions } from '../../src/provisioning/demo.js';

// Fixed anchor: the generated dates are the same on every call.
const generateDemo = (o: DemoOptions = {}) =>
  generate({ now: new Date('2026-06-01T12:00:00Z'), ...o });
import { ImportError, importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, openTestDb } from '../helper.js';

const count = async (db: Database, table: string) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
const TABLES = [
  'companies',
  'sites',
  'modbus_devices',
  'registers',
  'sensors',
  'sensor_registers',
  'flow_meters',
  'pumps',
  'tank_groups',
  'equipment_register_roles',
  'actuators',
  'actuator_sensor_scalings',
  'actuator_sensor_triggers',
  'actuator_tank_group_connections',
  'cameras',
  'transactions',
  'transaction_changes',
  'images',
];
const snapshot = async (db: Database) =>
  Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(db, t)])));

describeEachBackend('provisioning import', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(async () => db?.close());

  it('imports the demo set with the sizes the demo promises', async () => {
    const summary = await importDocument(db, generateDemo());
    const n = await snapshot(db);
    expect(n.companies).toBe(2);
    expect(n.sites).toBeGreaterThanOrEqual(3);
    expect(n.registers).toBeGreaterThanOrEqual(50);
    expect(n.transactions).toBeGreaterThanOrEqual(100);
    expect(n.transaction_changes).toBeGreaterThan(n.transactions);
    for (const t of [
      'sensors',
      'flow_meters',
      'pumps',
      'tank_groups',
      'actuators',
      'cameras',
      'images',
      'actuator_sensor_scalings',
    ])
      expect(n[t], t).toBeGreaterThan(0);
    expect(summary.registers.changed).toBe(n.registers);
    const [img] = await db.query<{ data: Uint8Array }>(
      `SELECT b.data FROM images i JOIN image_blobs b USING (sha256) WHERE i.content_type = 'image/png' LIMIT 1`,
    );
    expect(Buffer.from(img.data).subarray(1, 4).toString()).toBe('PNG');
  });

  it('re-importing the same document stores nothing twice and changes no stamp', async () => {
    const before = await snapshot(db);
    const stamps = await db.query(
      `SELECT register_id, updated_at FROM registers ORDER BY register_id`,
    );
    const summary = await importDocument(db, generateDemo(), {
      now: new Date(Date.now() + 60_000),
    });
    expect(await snapshot(db)).toEqual(before);
    for (const list of [
      'sites',
      'registers',
      'sensors',
      'pumps',
      'transactions',
      'changes',
      'images',
    ])
      expect(summary[list].changed, list).toBe(0);
    expect(
      await db.query(`SELECT register_id, updated_at FROM registers ORDER BY register_id`),
    ).toEqual(stamps);
  });

  it('imports a second document with other ids beside the first', async () => {
    const before = await snapshot(db);
    await importDocument(db, generateDemo({ idBase: 500, sites: 2, transactionsPerSite: 5 }));
    const after = await snapshot(db);
    expect(after.sites).toBe(before.sites + 2);
    const [bigId] = await db.query(
      `SELECT register_id FROM registers WHERE site_id = 501 ORDER BY register_id LIMIT 1`,
    );
    expect(bigId.register_id).toBe('5010000000001');
  });

  it('stamps only the records that changed', async () => {
    const doc = generateDemo();
    const stamp = new Date('2030-01-01T00:00:00.000Z');
    const reg = doc.registers[3];
    reg.Name = 'renamed register';
    doc.pumps[0].MaximumFlow = 99_999;
    doc.sensors[1].RegisterIDs = [...doc.sensors[1].RegisterIDs!].reverse().concat([]); // order only may differ
    await importDocument(db, doc, { now: stamp });
    const changedRegs = await db.query<{ register_id: string }>(
      `SELECT register_id FROM registers WHERE updated_at = $1`,
      [stamp],
    );
    expect(changedRegs.map((r) => r.register_id)).toEqual([String(reg.SiteIODeviceRegisterID)]);
    const pumps = await db.query<{ pump_id: number }>(
      `SELECT pump_id FROM pumps WHERE updated_at = $1`,
      [stamp],
    );
    expect(pumps.map((p) => p.pump_id)).toEqual([doc.pumps[0].SitePumpID]);
  });

  it('rejects a bad document as a whole, naming the first bad record with its index and field', async () => {
    const before = await snapshot(db);
    const cases: [(d: any) => void, string][] = [
      [(d) => (d.sensors[2].Name = 42), 'sensors[2].Name'],
      [(d) => delete d.pumps[1].IsVFD, 'pumps[1].IsVFD'],
      [
        (d) => (d.registers[5].SiteModbusInOutDeviceID = 987654),
        'registers[5].SiteModbusInOutDeviceID',
      ],
      [(d) => (d.sensors[0].RegisterIDs = ['123456789012345']), 'sensors[0].RegisterIDs[0]'],
      [(d) => (d.sites[1].CompanyID = 77), 'sites[1].CompanyID'],
      [(d) => (d.transactions[4].TransactionDate = 'yesterday'), 'transactions[4].TransactionDate'],
      [(d) => (d.images[0].DataBase64 = 'not base64!'), 'images[0].DataBase64'],
      [
        (d) => d.sensors.push({ ...d.sensors[0], RegisterIDs: [] }),
        `sensors[${generateDemo().sensors.length}].SiteSensorID`,
      ],
      [
        (d) =>
          (d.flowMeters[0].Registers.TotalVolume = d.registers.find(
            (r: any) => r.SiteModbusInOutDeviceID > 20000,
          ).SiteIODeviceRegisterID),
        'flowMeters[0].Registers.TotalVolume',
      ],
    ];
    for (const [spoil, path] of cases) {
      const doc = generateDemo();
      doc.sites[0].Name = 'this change must not land';
      spoil(doc);
      const err = await importDocument(db, doc).catch((e) => e);
      expect(err, path).toBeInstanceOf(ImportError);
      expect((err as ImportError).path, (err as Error).message).toBe(path);
    }
    expect(await snapshot(db)).toEqual(before);
    const [site] = await db.query(`SELECT name FROM sites WHERE site_id = 1`);
    expect(site.name).not.toBe('this change must not land');
  });
});
