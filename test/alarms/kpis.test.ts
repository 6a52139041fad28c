import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR } from './fixtures.js';
import { managementClient, type ManagementClient } from './management-fixtures.js';

// Alarm performance (contract 16): the figures of a known set of alarms, whose RaisedAt,
// AcknowledgedAt and ResolvedAt are written directly (the service's clock cannot be moved).

const DEMO = { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 };
const T = (hms: string, day = '2026-01-01') => `${day}T${hms}.000Z`;
const RANGE = { start: T('00:05:00'), end: T('01:00:00') }; // 6 windows: 00:00 (partial) to 00:50
const at = (iso: string, s: number) => new Date(Date.parse(iso) + s * 1000).toISOString();

interface Row {
  type: number | null;
  eq: number | null;
  alarmType: string;
  raised: string;
  acked?: string;
  resolved?: string;
}

describeEachBackend('alarm performance (POST /v1/alarms/kpis)', (backend) => {
  let ctx: TestContext;
  let api: ManagementClient;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    api = managementClient(ctx, await ctx.token([1, 2]));
    const rows: Row[] = [
      // A flood of one chattering key: 12 in the window 00:10, 5 s apart, each resolved after 1 s.
      ...Array.from({ length: 12 }, (_, i) => ({
        type: 5,
        eq: SENSOR,
        alarmType: 'Flood',
        raised: at(T('00:10:00'), 5 * i),
        resolved: at(T('00:10:00'), 5 * i + 1),
        acked: i === 0 ? at(T('00:10:00'), 20) : undefined,
      })),
      // Three raises, but not within 60 s: no chatter.
      ...['00:20:00', '00:25:00', '00:30:00'].map((t) => ({
        type: 5,
        eq: SENSOR,
        alarmType: 'Slow',
        raised: T(t),
        resolved: at(T(t), 60),
      })),
      { type: null, eq: null, alarmType: 'COMM', raised: T('00:40:00'), acked: T('00:41:40') },
      // Outside [start, end): not counted.
      { type: 5, eq: SENSOR, alarmType: 'Before', raised: T('00:04:59'), resolved: T('00:06:00') },
      { type: 5, eq: SENSOR, alarmType: 'AtEnd', raised: T('01:00:00') },
      // Standing at end: raised before end - 24 h and not resolved at end.
      { type: 2, eq: 10401, alarmType: 'Old', raised: T('12:00:00', '2025-12-30') },
      {
        type: 2,
        eq: 10401,
        alarmType: 'OldResolvedLater',
        raised: T('12:00:00', '2025-12-30'),
        resolved: T('00:00:00', '2026-01-02'),
      },
      {
        type: 2,
        eq: 10401,
        alarmType: 'OldResolvedBefore',
        raised: T('12:00:00', '2025-12-30'),
        resolved: T('12:00:00', '2025-12-31'),
      },
    ];
    for (const r of rows)
      await ctx.db.query(
        `INSERT INTO site_alarms (site_id, equipment_type_id, equipment_id, alarm_type, severity, message,
                                  first_seen, last_seen, raised_at, acknowledged_at, acknowledged_by, resolved_at, resolved_by)
         VALUES (1, $1, $2, $3, 'major', 'm', $4, $4, $4, $5, CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE 'op' END,
                 $6, CASE WHEN $6::timestamptz IS NULL THEN NULL ELSE 'op' END)`,
        [r.type, r.eq, r.alarmType, r.raised, r.acked ?? null, r.resolved ?? null],
      );
  });
  afterAll(async () => ctx?.close());

  const SITE1 = {
    SiteID: 1,
    Raised: 16,
    AveragePer10Min: 16 / 6,
    Peak10Min: 12,
    FloodPercent: 100 / 6,
    Standing: 2,
    MeanSecondsToAcknowledge: 60, // 20 s and 100 s
    TopAlarms: [
      { EquipmentTypeID: 5, EquipmentID: String(SENSOR), AlarmType: 'Flood', Count: 12 },
      { EquipmentTypeID: 5, EquipmentID: String(SENSOR), AlarmType: 'Slow', Count: 3 },
      { EquipmentTypeID: null, EquipmentID: null, AlarmType: 'COMM', Count: 1 },
    ],
    Chattering: [
      { EquipmentTypeID: 5, EquipmentID: String(SENSOR), AlarmType: 'Flood', Count: 12 },
    ],
  };
  const SITE2 = {
    SiteID: 2,
    Raised: 0,
    AveragePer10Min: 0,
    Peak10Min: 0,
    FloodPercent: 0,
    Standing: 0,
    MeanSecondsToAcknowledge: null,
    TopAlarms: [],
    Chattering: [],
  };

  it('computes the ISA-18.2 / EEMUA 191 figures per site, in request order', async () => {
    const res = await api.post('alarms/kpis', { siteIds: [2, 1], ...RANGE });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    const [two, one] = res.body;
    expect(two).toEqual(SITE2);
    expect(one).toEqual({
      ...SITE1,
      AveragePer10Min: expect.closeTo(16 / 6, 9),
      FloodPercent: expect.closeTo(100 / 6, 9),
      MeanSecondsToAcknowledge: expect.closeTo(60, 9),
    });
  });

  it('with series, alarms per aligned window, empty ones included', async () => {
    const res = await api.post('alarms/kpis', { siteIds: [1], ...RANGE, series: '10m' });
    expect(res.body[0].Series).toEqual(
      [0, 12, 2, 1, 1, 0].map((Raised, i) => ({ Start: at(T('00:00:00'), 600 * i), Raised })),
    );
    const hourly = await api.post('alarms/kpis', { siteIds: [1], ...RANGE, series: '1h' });
    expect(hourly.body[0].Series).toEqual([{ Start: T('00:00:00'), Raised: 16 }]);
  });

  it('answers CSV when Accept prefers it: keys as one field each, Series left out', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/alarms/kpis',
      headers: {
        authorization: `Bearer ${await ctx.token([1, 2])}`,
        accept: 'text/csv',
      },
      payload: { siteIds: [1, 2], ...RANGE, series: '10m' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'SiteID,Raised,AveragePer10Min,Peak10Min,FloodPercent,Standing,MeanSecondsToAcknowledge,TopAlarms,Chattering',
    );
    const one = lines[1].split(',');
    expect(one.slice(0, 4)).toEqual(['1', '16', String(16 / 6), '12']);
    expect(one.slice(5)).toEqual([
      '2',
      '60',
      `5:${SENSOR}:Flood=12 5:${SENSOR}:Slow=3 ::COMM=1`,
      `5:${SENSOR}:Flood=12`,
    ]);
    expect(lines[2]).toBe('2,0,0,0,0,0,,,');
    expect(lines).toHaveLength(3);
  });

  it('refuses a site out of reach (403), a bad series or range, and too long a series (400)', async () => {
    const only2 = managementClient(ctx, await ctx.token([2]));
    expect((await only2.post('alarms/kpis', { siteIds: [1], ...RANGE })).status).toBe(403);
    for (const body of [
      { siteIds: [1], ...RANGE, series: '5m' },
      { siteIds: [1], start: RANGE.end, end: RANGE.start },
      { siteIds: [1], start: '2025-01-01T00:00:00Z', end: '2026-01-03T00:00:00Z' },
      { siteIds: [], ...RANGE },
      {
        siteIds: [1, 2],
        start: '2025-01-01T00:00:00Z',
        end: '2026-01-01T00:00:00Z',
        series: '10m',
      },
    ]) {
      const res = await api.post('alarms/kpis', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    // The same year at 10 minutes for one site is within the bound.
    const one = await api.post('alarms/kpis', {
      siteIds: [1],
      start: '2025-01-01T00:00:00Z',
      end: '2026-01-01T00:00:00Z',
      series: '10m',
    });
    expect(one.status).toBe(200);
    expect(one.body[0].Series).toHaveLength(365 * 144);
  });
});
