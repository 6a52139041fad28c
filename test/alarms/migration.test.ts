import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrate.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, openTestDb } from '../helper.js';
import { SENSOR } from './fixtures.js';

// Migration 015 as a database made before it meets it: its alarms get RaisedAt, Source, a journal,
// and the resolved ones count as acknowledged at their resolve.

describeEachBackend('alarm management migration (015)', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 0, imagesPerSite: 0 }));
  });
  afterAll(async () => db?.close());

  it('fills the new fields and the journal of the alarms already stored', async () => {
    // Back to the schema before 015.
    await db.exec(`
      DROP TABLE alarm_journal;
      DROP INDEX site_alarms_raised_idx, site_alarms_shelved_idx, site_alarms_resolved_idx;
      ALTER TABLE site_alarms DROP COLUMN source, DROP COLUMN raised_at, DROP COLUMN acknowledged_at,
        DROP COLUMN acknowledged_by, DROP COLUMN shelved_until;
      DELETE FROM schema_migrations WHERE version = 15;`);
    await db.query(
      `INSERT INTO site_alarms (site_id, equipment_type_id, equipment_id, alarm_type, severity, message, first_seen, last_seen,
                                resolved_at, resolved_by, resolve_note)
       VALUES (1, 5, $1, 'Open', 'major', 'm', '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z', NULL, NULL, NULL),
              (1, 5, $1, 'Closed', 'minor', 'm', '2026-01-02T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-02T03:00:00Z', 'op', 'fixed')`,
      [SENSOR],
    );
    expect(await migrate(db)).toEqual(['015_alarm_lifecycle.sql']);
    const alarms = await db.query(
      `SELECT alarm_type, source, raised_at, acknowledged_at, acknowledged_by, shelved_until
         FROM site_alarms ORDER BY alarm_id`,
    );
    expect(alarms).toEqual([
      {
        alarm_type: 'Open',
        source: 'edge',
        raised_at: new Date('2026-01-01T00:00:00Z'),
        acknowledged_at: null,
        acknowledged_by: null,
        shelved_until: null,
      },
      {
        alarm_type: 'Closed',
        source: 'edge',
        raised_at: new Date('2026-01-02T00:00:00Z'),
        acknowledged_at: new Date('2026-01-02T03:00:00Z'),
        acknowledged_by: 'op',
        shelved_until: null,
      },
    ]);
    const journal = await db.query(
      `SELECT a.alarm_type, j.time, j.event, j.by, j.note
         FROM alarm_journal j JOIN site_alarms a USING (alarm_id) ORDER BY j.time, j.event_id`,
    );
    expect(journal).toEqual([
      {
        alarm_type: 'Open',
        time: new Date('2026-01-01T00:00:00Z'),
        event: 'raised',
        by: null,
        note: null,
      },
      {
        alarm_type: 'Closed',
        time: new Date('2026-01-02T00:00:00Z'),
        event: 'raised',
        by: null,
        note: null,
      },
      {
        alarm_type: 'Closed',
        time: new Date('2026-01-02T03:00:00Z'),
        event: 'acknowledged',
        by: 'op',
        note: 'resolved before acknowledgement existed',
      },
      {
        alarm_type: 'Closed',
        time: new Date('2026-01-02T03:00:00Z'),
        event: 'resolved',
        by: 'op',
        note: 'fixed',
      },
    ]);
    // A new alarm after the migration: raised at its transaction's time, by the service's clock.
    const [fresh] = await db.query<{ ok: boolean }>(
      `INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen)
       VALUES (1, 'New', 'info', 'm', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z')
       RETURNING raised_at = now() AND source = 'edge' AS ok`,
    );
    expect(fresh.ok).toBe(true);
  });
});
