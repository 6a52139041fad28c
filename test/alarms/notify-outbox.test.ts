import { afterAll, beforeAll, expect, it } from 'vitest';
import { claimDue, settle } from '../../src/alarms/notify/deliver.js';
import { markResolved, upsertAlarms, type AlarmGroup } from '../../src/alarms/store.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// The outbox as the engine sees it (contract 16), without a running service: what a change records
// commits or rolls back with it; a claimed delivery is leased to one taker; a taker that dies
// before recording the outcome leaves it to the next, with the same deliveryId; an outcome
// recorded twice writes one journal entry.

describeEachBackend('notification outbox', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, {
      ...generateDemo({ sites: 1, transactionsPerSite: 0, imagesPerSite: 0 }),
      notificationChannels: [
        { ChannelID: 'hook', Type: 'webhook', Url: 'https://hooks.example.com/x' },
      ],
      notificationPolicies: [
        {
          PolicyID: 'p',
          SiteIDs: [1],
          MinSeverity: 'info',
          Steps: [{ AfterMinutes: 0, ChannelIDs: ['hook'] }],
        },
      ],
    });
  });
  afterAll(async () => db?.close());

  const group = (alarmType: string): AlarmGroup => ({
    typeId: null,
    equipmentId: null,
    alarmType,
    severity: 'major',
    message: 'm',
    value: null,
    firstSeen: Date.now(),
    lastSeen: Date.now(),
    occurrences: 1,
  });
  const count = async (table: string, alarmId: string) =>
    (
      await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE alarm_id = $1`, [
        alarmId,
      ])
    )[0].n;

  it('a raise records its notification in its own statement: rolled back with it, committed with it', async () => {
    const rolledBack = new Error('rolled back');
    let id = '';
    await db
      .transaction(async (tx) => {
        const stored = await upsertAlarms(tx, 1, [group('OUTBOX_RB')]);
        id = [...stored.values()][0].record.SiteAlarmLogID;
        expect(
          await tx.query(
            `SELECT event, step FROM notification_outbox WHERE alarm_id = $1 AND channel_id = 'hook'`,
            [id],
          ),
        ).toEqual([{ event: 'raised', step: 0 }]);
        throw rolledBack;
      })
      .catch((err: unknown) => {
        if (err !== rolledBack) throw err;
      });
    expect(await count('notification_outbox', id)).toBe(0);
    const stored = await upsertAlarms(db, 1, [group('OUTBOX_OK')]);
    const ok = [...stored.values()][0].record.SiteAlarmLogID;
    expect(await count('notification_outbox', ok)).toBe(1);
    // One step, no repeat: nothing left to schedule.
    expect(await count('notification_schedule', ok)).toBe(0);
    // A duplicate send records nothing more.
    await upsertAlarms(db, 1, [group('OUTBOX_OK')]);
    expect(await count('notification_outbox', ok)).toBe(1);
  });

  it('alarms raised together in one statement each get their notification', async () => {
    const stored = await upsertAlarms(db, 1, [group('OUTBOX_BATCH_A'), group('OUTBOX_BATCH_B')]);
    const ids = [...stored.values()].map((v) => v.record.SiteAlarmLogID);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(await count('notification_outbox', id)).toBe(1);
  });

  it('a claimed delivery is leased; after a taker dies it is taken again with the same deliveryId, and journaled once', async () => {
    const stored = await upsertAlarms(db, 1, [group('OUTBOX_LEASE')]);
    const id = [...stored.values()][0].record.SiteAlarmLogID;
    const first = (await claimDue(db, 1000)).filter((c) => c.alarm_id === id);
    expect(first).toHaveLength(1);
    // Leased: nobody else takes it meanwhile.
    expect((await claimDue(db, 1000)).filter((c) => c.alarm_id === id)).toHaveLength(0);
    // The taker died (no outcome recorded); its lease ends.
    await db.query(`UPDATE notification_outbox SET next_attempt_at = now() WHERE alarm_id = $1`, [
      id,
    ]);
    const second = (await claimDue(db, 1000)).filter((c) => c.alarm_id === id);
    expect(second).toHaveLength(1);
    expect(second[0].delivery_id).toBe(first[0].delivery_id);
    expect(second[0].attempts).toBe(2);
    expect(await settle(db, second[0], { result: 'delivered' })).toBe('delivered');
    // The first taker, back late, records its outcome too: no second entry.
    await settle(db, first[0], { result: 'delivered' });
    const entries = await db.query(
      `SELECT event, channel, step FROM alarm_journal WHERE alarm_id = $1 AND event = 'notified'`,
      [id],
    );
    expect(entries).toEqual([{ event: 'notified', channel: 'hook', step: 0 }]);
    expect(await count('notification_outbox', id)).toBe(0);

    // The resolve records the `resolved` notification to the channel that was notified, in its statement.
    await markResolved(db, 1, [{ id, note: null }], 'someone');
    const resolved = await db.query(
      `SELECT channel_id, event, step FROM notification_outbox WHERE alarm_id = $1`,
      [id],
    );
    expect(resolved).toEqual([{ channel_id: 'hook', event: 'resolved', step: null }]);
  });
});
