import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { ImportError, importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// Ids are positive: every id of a provisioning document (a record's own, the records it names, the
// lookup codes, the links and bindings) is refused at 0 or below, naming the field, and nothing of
// the document is stored.

type Spoil = (d: any) => void;
const CASES: [Spoil, string, RegExp][] = [
  [(d) => (d.sites[0].SiteID = 0), 'sites[0].SiteID', /^must be a positive integer/],
  [(d) => (d.sites[0].SiteID = -4), 'sites[0].SiteID', /^must be a positive integer/],
  [(d) => (d.companies[0].CompanyID = 0), 'companies[0].CompanyID', /positive/],
  [(d) => (d.sensors[1].SiteSensorID = -1), 'sensors[1].SiteSensorID', /positive/],
  [(d) => (d.sensors[1].SiteID = 0), 'sensors[1].SiteID', /positive/],
  [(d) => (d.sensors[0].UnitID = 0), 'sensors[0].UnitID', /^must be a positive integer.* or null$/],
  [(d) => (d.sensors[0].EquipmentID = '0'), 'sensors[0].EquipmentID', /positive 64-bit/],
  [(d) => (d.sensors[0].RegisterIDs = ['-5']), 'sensors[0].RegisterIDs[0]', /positive 64-bit/],
  [
    (d) => (d.registers[2].SiteIODeviceRegisterID = 0),
    'registers[2].SiteIODeviceRegisterID',
    /positive 64-bit/,
  ],
  [
    (d) => (d.registers[2].SiteModbusInOutDeviceID = 0),
    'registers[2].SiteModbusInOutDeviceID',
    /positive/,
  ],
  [
    (d) => (d.flowMeters[0].Registers.TotalVolume = -7),
    'flowMeters[0].Registers.TotalVolume',
    /positive 64-bit/,
  ],
  [(d) => (d.pumps[0].SitePumpID = 0), 'pumps[0].SitePumpID', /positive/],
  [(d) => (d.tankGroups[0].SiteTankGroupID = 0), 'tankGroups[0].SiteTankGroupID', /positive/],
  [
    (d) => (d.actuators[0].SensorScalings[0].SiteSensorID = 0),
    'actuators[0].SensorScalings[0].SiteSensorID',
    /positive/,
  ],
  [(d) => (d.cameras[0].CameraID = 0), 'cameras[0].CameraID', /positive/],
  [(d) => (d.transactions[0].TransactionID = 0), 'transactions[0].TransactionID', /positive/],
  [(d) => (d.images[0].SiteID = 0), 'images[0].SiteID', /positive/],
  [
    (d) => (d.images[0].CameraID = -2),
    'images[0].CameraID',
    /^must be a positive integer.* or null$/,
  ],
  [
    (d) => (d.clients = [{ clientId: 'c', clientSecret: 'secret-123', siteIds: [1, 0] }]),
    'clients[0].siteIds[1]',
    /positive/,
  ],
  [
    (d) =>
      (d.sparkplugMetrics = [{ GroupID: 'g', EdgeNodeID: 'n', MetricName: 'm', SiteSensorID: 0 }]),
    'sparkplugMetrics[0].SiteSensorID',
    /positive/,
  ],
];

describeEachBackend('ids in a provisioning document', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(async () => db?.close());

  it('refuses an id of 0 or below, naming the field, and stores nothing', async () => {
    for (const [spoil, path, reason] of CASES) {
      const doc = generateDemo({ sites: 1, transactionsPerSite: 1, imagesPerSite: 1 });
      spoil(doc);
      const err = await importDocument(db, doc).catch((e) => e);
      expect(err, path).toBeInstanceOf(ImportError);
      expect((err as ImportError).path, (err as Error).message).toBe(path);
      expect((err as ImportError).reason, path).toMatch(reason);
    }
    expect(await db.query(`SELECT 1 FROM sites`)).toEqual([]);
    // The same document with its ids as generated imports.
    await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 1, imagesPerSite: 1 }));
    expect((await db.query(`SELECT 1 FROM sites`)).length).toBe(1);
  });
});
