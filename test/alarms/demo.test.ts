import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { seedDemoAlarms } from '../../src/alarms/demo.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, openTestDb } from '../helper.js';

describeEachBackend('demo alarms', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    // What seedDemo (src/provisioning/seed.ts) does, without its week of telemetry.
    await importDocument(db, generateDemo());
    await seedDemoAlarms(db);
  });
  afterAll(async () => db?.close());

  it('a fresh demo database has a few active and a few resolved alarms on its sites', async () => {
    const rows = await db.query(
      `SELECT site_id, equipment_type_id, alarm_type, occurrences, resolved_at IS NOT NULL AS resolved, resolved_by, resolve_note
         FROM site_alarms ORDER BY alarm_id`,
    );
    const active = rows.filter((r) => !r.resolved);
    const resolved = rows.filter((r) => r.resolved);
    expect(active.length).toBeGreaterThanOrEqual(3);
    expect(resolved.length).toBeGreaterThanOrEqual(2);
    expect(new Set(rows.map((r) => r.site_id)).size).toBeGreaterThanOrEqual(3);
    expect(resolved.every((r) => r.resolved_by === 'demo' && r.resolve_note)).toBe(true);
    // Repeated sends were counted as duplicates of one alarm; site alarms (no equipment) are there too.
    expect(rows.find((r) => r.alarm_type === 'HighDischargePressure')).toMatchObject({
      occurrences: 4,
      equipment_type_id: 2,
      resolved: false,
    });
    expect(rows.some((r) => r.equipment_type_id === null)).toBe(true);
  });
});
