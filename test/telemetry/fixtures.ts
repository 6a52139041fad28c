import { afterAll, beforeAll } from 'vitest';
import type { Settings } from '../../src/settings.js';
import type { Database } from '../../src/db/index.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { TelemetryWriter, type WriterOptions } from '../../src/telemetry/writer.js';
import { bearer, instrument, startApp, type Backend, type TestContext } from '../helper.js';

// Equipment of the generated demo document (src/provisioning/demo.ts): ids are site * 10000 + n.
export const SENSOR = 10100;
export const SENSOR_2 = 10101;
export const METER = 10301;
export const PUMP = 10401;
export const TANK = 10501;
export const SITE2_SENSOR = 20100;
export const SITE2_PUMP = 20401;

/** A time this many minutes ago, ISO. */
export const minutesAgo = (m: number) =>
  new Date(Math.floor(Date.now() / 60_000) * 60_000 - m * 60_000).toISOString();

export function poster(ctx: TestContext, token: string) {
  return async (url: string, payload: unknown) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/edge/${url}`,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.statusCode, body: res.json() };
  };
}

/** One app (demo equipment, a client reaching every site) for a whole suite; its fields are set before the first test. */
export function suiteApp(backend: Backend, settings: Partial<Settings> = {}) {
  const t = {} as { ctx: TestContext; token: string; post: ReturnType<typeof poster> };
  beforeAll(async () => {
    t.ctx = await startApp(backend, { settings });
    t.token = await t.ctx.token();
    t.post = poster(t.ctx, t.token);
  });
  afterAll(async () => t.ctx?.close());
  return t;
}

/** One record of each kind at time ts, for the generic routes. */
export const mixed = (ts: string, n: number) => [
  { sensorID: SENSOR, value: n, timestamp: ts },
  { flowMeterID: METER, totalVolume: n + 1, timestamp: ts },
  { sitePumpID: PUMP, running: n % 2 === 0, timestamp: ts },
  { siteTankGroupID: TANK, entryTankLevel: n + 2, timestamp: ts },
];

export const count = async (db: Database, table: string, where = 'true', params: unknown[] = []) =>
  Number(
    (await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]
      .n,
  );

/** Row counts of every telemetry table, to show that a refused request stored nothing. */
export const snapshot = async (db: Database) => ({
  sensor: await count(db, 'sensor_logs'),
  meter: await count(db, 'meter_logs'),
  pump: await count(db, 'pump_logs'),
  tank: await count(db, 'tank_logs'),
  current: await count(db, 'current_readings'),
  touched: await count(db, 'sites', 'last_communication IS NOT NULL'),
});

/** A valid record of each kind, for the route-by-route checks. */
export const VALID: Record<
  'sensor' | 'meter' | 'pump' | 'tank',
  (ts: string) => Record<string, unknown>
> = {
  sensor: (ts) => ({ sensorID: SENSOR, value: 12.5, timestamp: ts }),
  meter: (ts) => ({
    flowMeterID: METER,
    timestamp: ts,
    startTimestamp: '2026-01-05T00:00:00Z',
    totalVolume: 1500.5,
    dayVolume: 12,
    pressure: 110,
    flowRate: 8000,
  }),
  pump: (ts) => ({
    sitePumpID: PUMP,
    timestamp: ts,
    pressure: 900,
    running: true,
    frequency: 55.5,
    statusID: 1,
    status: 'Running',
  }),
  tank: (ts) => ({
    siteTankGroupID: TANK,
    entryTankLevel: 10.5,
    exitTankLevel: 10.1,
    totalVolume: 3000,
    timestamp: ts,
  }),
};

export const KINDS = ['sensor', 'meter', 'pump', 'tank'] as const;

/**
 * A telemetry writer on `db` that records every statement it sends (within transactions too), for
 * tests that count statements; partitions cover the present. With `hold`, each statement is recorded
 * when the writer sends it and reaches the database once `hold` has resolved (writes held in flight).
 */
export async function countingWriter(db: Database, opts: WriterOptions, hold?: Promise<void>) {
  const sent: string[] = [];
  const send =
    (view: Pick<Database, 'query'>): Database['query'] =>
    async (sql, params, options) => {
      sent.push(sql);
      if (hold) await hold;
      return view.query(sql, params, options);
    };
  const counting = instrument(db, (view) => ({
    query: send(view),
    transaction: (fn) => view.transaction((tx) => fn({ ...tx, query: send(tx) })),
  }));
  const partitions = new Partitions(db);
  await partitions.cover(Date.now());
  return { writer: new TelemetryWriter(counting, partitions, opts), sent };
}
