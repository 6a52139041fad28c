import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAlarm, storeAlarms } from '../../src/alarms/send.js';
import { markResolved } from '../../src/alarms/store.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { closeStreams, listen, openStream, type Stream } from '../stream/fixtures.js';
import { minutesAgo, SENSOR, SITE2_SENSOR } from './fixtures.js';
import { aroundNow, managementClient, type ManagementClient } from './management-fixtures.js';

// Alarm management (contract 16): acknowledgement apart from resolution, shelving and its end by
// the service, the five new fields, the alarm list, the journal, the stream events.

const DEMO = { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 };
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeEachBackend('alarm management', (backend) => {
  let ctx: TestContext;
  let op: ManagementClient;
  let s: Stream;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    const token = await ctx.token('*', { clientId: 'op-1' });
    op = managementClient(ctx, token);
    s = openStream(await listen(ctx.app), token, { siteIds: '1' });
    await s.next((e) => e.type === 'snapshot');
  });
  afterAll(async () => {
    closeStreams();
    await ctx?.close();
  });

  let n = 0;
  /** A new alarm of site 1 (or 2), its id. */
  const raise = async (siteId = 1, extra: object = {}) => {
    const res = await op.send({
      siteId,
      sensorID: siteId === 1 ? SENSOR : SITE2_SENSOR,
      alarmType: `T${++n}`,
      message: 'm',
      timestamp: minutesAgo(90), // RaisedAt is the arrival, not this
      ...extra,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.SiteAlarmLogID as string;
  };
  const activeRecord = async (id: string, siteId = 1) =>
    (await op.active([siteId])).body.find((a: any) => a.SiteAlarmLogID === id);
  const journalOf = async (id: string, siteIds = [1]) =>
    (await op.journal({ siteIds, ...aroundNow(), SiteAlarmLogID: id })).body.data;
  /** The next alarm event of this alarm on the stream, from event index `from`. */
  const eventOf = (id: string, status: string, from = 0) =>
    s.next(
      (e) => e.type === 'alarm' && e.data.alarm.SiteAlarmLogID === id && e.data.status === status,
      {
        from,
      },
    );

  it('a new alarm carries Source, RaisedAt (its arrival), and is unacknowledged and unshelved', async () => {
    const before = Date.now();
    const id = await raise();
    const after = Date.now();
    const a = await activeRecord(id);
    expect(a).toMatchObject({
      Source: 'edge',
      AcknowledgedAt: null,
      AcknowledgedBy: null,
      ShelvedUntil: null,
      FirstSeen: minutesAgo(90),
    });
    expect(a.RaisedAt).toMatch(ISO_MS);
    // The database's clock and this process's are one clock here; a little slack for rounding.
    expect(Date.parse(a.RaisedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(a.RaisedAt)).toBeLessThanOrEqual(after + 1000);
  });

  it('acknowledge leaves an alarm active; the first acknowledgement stays; a resolved alarm can be acknowledged', async () => {
    const id = await raise();
    const first = await op.acknowledge(1, [id], 'seen it');
    expect(first).toEqual({ status: 200, body: [{ SiteAlarmLogID: id, status: 'acknowledged' }] });
    const acked = await activeRecord(id);
    expect(acked).toMatchObject({ AcknowledgedBy: 'op-1', ShelvedUntil: null });
    expect(acked.AcknowledgedAt).toMatch(ISO_MS);
    expect(await op.acknowledge(1, [id])).toEqual({
      status: 200,
      body: [{ SiteAlarmLogID: id, status: 'already_acknowledged' }],
    });
    expect((await activeRecord(id)).AcknowledgedAt).toBe(acked.AcknowledgedAt);

    const other = await raise();
    expect((await op.resolve(1, [other], 'gone')).body[0].status).toBe('resolved');
    expect((await op.acknowledge(1, [other, other])).body).toEqual([
      { SiteAlarmLogID: other, status: 'acknowledged' },
      { SiteAlarmLogID: other, status: 'already_acknowledged' },
    ]);
  });

  it('shelve sets ShelvedUntil, the alarm stays in the active list; unshelve ends it; a resolved alarm is not shelved', async () => {
    const id = await raise();
    const before = Date.now();
    const res = await op.shelve(1, [id, id], 30, 'maintenance');
    expect(res.status).toBe(200);
    const until30 = res.body[0].ShelvedUntil;
    expect(res.body).toEqual([
      { SiteAlarmLogID: id, status: 'shelved', ShelvedUntil: until30 },
      { SiteAlarmLogID: id, status: 'shelved', ShelvedUntil: until30 },
    ]);
    expect(Date.parse(until30) - before).toBeGreaterThan(29 * 60_000);
    expect(Date.parse(until30) - before).toBeLessThan(31 * 60_000);
    expect((await activeRecord(id)).ShelvedUntil).toBe(until30);

    expect((await op.unshelve(1, [id])).body).toEqual([
      { SiteAlarmLogID: id, status: 'unshelved' },
    ]);
    expect((await activeRecord(id)).ShelvedUntil).toBeNull();
    expect((await op.unshelve(1, [id])).body).toEqual([
      { SiteAlarmLogID: id, status: 'not_shelved' },
    ]);

    await op.resolve(1, [id]);
    expect((await op.shelve(1, [id], 5)).body).toEqual([
      { SiteAlarmLogID: id, status: 'already_resolved', ShelvedUntil: null },
    ]);
  });

  it('the journal has every change with who and why, oldest first; a duplicate send has none', async () => {
    const id = await raise(1, { alarmType: 'Journaled' });
    await raise(1, { alarmType: 'Journaled' }); // a duplicate: Occurrences only
    await op.acknowledge(1, [id], 'ack note');
    await op.shelve(1, [id], 10, 'shelve note');
    await op.unshelve(1, [id], 'unshelve note');
    await op.resolve(1, [id], 'resolve note');
    const entries = await journalOf(id);
    expect(entries.map((e: any) => [e.Event, e.By, e.Note])).toEqual([
      ['raised', 'op-1', null],
      ['acknowledged', 'op-1', 'ack note'],
      ['shelved', 'op-1', 'shelve note'],
      ['unshelved', 'op-1', 'unshelve note'],
      ['resolved', 'op-1', 'resolve note'],
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ SiteAlarmLogID: id, SiteID: 1, Channel: null, Step: null });
      expect(e.EventID).toMatch(/^\d+$/);
      expect(e.Time).toMatch(ISO_MS);
    }
    const ids = entries.map((e: any) => BigInt(e.EventID));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);

    // Paged: the same entries one at a time, total counting all of them.
    const page2 = await op.journal({
      siteIds: [1],
      ...aroundNow(),
      SiteAlarmLogID: id,
      page: 2,
      perPage: 1,
    });
    expect(page2.body).toMatchObject({ page: 2, perPage: 1, total: 5, totalPages: 5 });
    expect(page2.body.data).toEqual([entries[1]]);
  });

  it('the alarm list: resolved ones included with how, newest first, filtered by state and by RaisedAt', async () => {
    const range = aroundNow();
    const open = await raise();
    const acked = await raise();
    const resolved = await raise();
    await op.acknowledge(1, [acked]);
    await op.resolve(1, [resolved], 'fixed');
    const ids = (body: any) =>
      body.data
        .map((a: any) => a.SiteAlarmLogID)
        .filter((x: string) => [open, acked, resolved].includes(x));

    const all = await op.list({ siteIds: [1], ...range });
    expect(all.status).toBe(200);
    expect(ids(all.body)).toEqual([resolved, acked, open]);
    const r = all.body.data.find((a: any) => a.SiteAlarmLogID === resolved);
    expect(r).toMatchObject({ ResolvedBy: 'op-1', ResolveNote: 'fixed', Source: 'edge' });
    expect(r.ResolvedAt).toMatch(ISO_MS);
    expect(all.body.data.find((a: any) => a.SiteAlarmLogID === open)).toMatchObject({
      ResolvedAt: null,
      ResolvedBy: null,
      ResolveNote: null,
    });
    const times = all.body.data.map((a: any) => a.RaisedAt);
    expect([...times].sort().reverse()).toEqual(times);

    expect(ids((await op.list({ siteIds: [1], ...range, state: 'active' })).body)).toEqual([
      acked,
      open,
    ]);
    expect(ids((await op.list({ siteIds: [1], ...range, state: 'unacknowledged' })).body)).toEqual([
      resolved,
      open,
    ]);
    // RaisedAt, not the sends' timestamps (90 minutes ago), decides the range.
    const earlier = await op.list({
      siteIds: [1],
      start: minutesAgo(120),
      end: new Date(Date.now() - 30 * 60_000).toISOString(),
    });
    expect(ids(earlier.body)).toEqual([]);
    const paged = await op.list({ siteIds: [1], ...range, page: 1, perPage: 2 });
    expect(paged.body.data.length).toBe(2);
    expect(paged.body.totalPages).toBe(Math.ceil(all.body.total / 2));
  });

  it('each change is an alarm stream event with its status and the record as the active list shows it after it', async () => {
    const from = s.events.length;
    const id = await raise();
    await op.acknowledge(1, [id]);
    const acked = await eventOf(id, 'acknowledged', from);
    expect(acked.data).toEqual({
      siteId: 1,
      status: 'acknowledged',
      alarm: await activeRecord(id),
    });
    await op.shelve(1, [id], 15);
    const shelved = await eventOf(id, 'shelved', from);
    expect(shelved.data.alarm).toEqual(await activeRecord(id));
    expect(shelved.data.alarm.ShelvedUntil).toMatch(ISO_MS);
    await op.unshelve(1, [id]);
    expect((await eventOf(id, 'unshelved', from)).data.alarm).toEqual(await activeRecord(id));
  });

  it('a shelf that ends is unshelved by the service: event and journal entry with By null; a longer one stays', async () => {
    const ending = await raise();
    const staying = await raise();
    await op.shelve(1, [ending, staying], 60);
    const from = s.events.length;
    // Time passing, without waiting a minute: the shelf's end moved to just now.
    await ctx.db.query(
      `UPDATE site_alarms SET shelved_until = now() - interval '1 second' WHERE alarm_id = $1`,
      [ending],
    );
    const ev = await eventOf(ending, 'unshelved', from);
    expect(ev.data.alarm.ShelvedUntil).toBeNull();
    expect((await activeRecord(ending)).ShelvedUntil).toBeNull();
    const last = (await journalOf(ending)).at(-1);
    expect(last).toMatchObject({ Event: 'unshelved', By: null, Note: null });
    expect((await activeRecord(staying)).ShelvedUntil).toMatch(ISO_MS);
    expect((await journalOf(staying)).map((e: any) => e.Event)).toEqual(['raised', 'shelved']);
  });

  it('raises and resolves through the store (as rules do) carry their Source and By into the journal', async () => {
    const alarm = parseAlarm(
      { sensorID: SENSOR, alarmType: 'RuleHigh', message: 'above', timestamp: minutesAgo(1) },
      0,
      '',
    );
    alarm.equipment = { field: 'sensorID', kind: 'sensor', typeId: 5, id: SENSOR };
    const [sent] = await storeAlarms(ctx.db, 1, [alarm], { source: 'rule', by: 'rule:7' });
    expect(sent.alarm.Source).toBe('rule');
    // An edge send of the same key is a duplicate of it: no new journal entry, Source stays.
    const dup = await op.send({
      siteId: 1,
      sensorID: SENSOR,
      alarmType: 'RuleHigh',
      message: 'edge',
      timestamp: minutesAgo(0),
    });
    expect(dup.body).toEqual({ SiteAlarmLogID: sent.SiteAlarmLogID, status: 'duplicate' });
    await markResolved(ctx.db, 1, [{ id: sent.SiteAlarmLogID, note: null }], 'rule:7');
    expect((await journalOf(sent.SiteAlarmLogID)).map((e: any) => [e.Event, e.By])).toEqual([
      ['raised', 'rule:7'],
      ['resolved', 'rule:7'],
    ]);
    const listed = (await op.list({ siteIds: [1], ...aroundNow() })).body.data.find(
      (a: any) => a.SiteAlarmLogID === sent.SiteAlarmLogID,
    );
    expect(listed).toMatchObject({ Source: 'rule', ResolvedBy: 'rule:7', Occurrences: 2 });
  });
});
