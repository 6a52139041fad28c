import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/index.js';
import { upsertClient } from '../../src/auth/clients.js';
import { seedDemo } from '../../src/provisioning/seed.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { bearer, testSettings } from '../helper.js';
import { allRoutes } from '../config/fixture.js';

// The backup suites' database and what they compare: a loaded database (the demo set with its week
// of telemetry, rollups and alarms, then uploads of every kind, some rolled up and some still stale,
// alarms sent and resolved) and the answers of every kind of read, as bytes.

type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * The app on `db`, the token signing secret taken from the database (so a restored one must bring it).
 * No background rollup refresh: buckets marked stale stay so, before the backup and after the restore
 * alike (answers are exact either way, but a sum over rollups may differ in its last digits).
 */
export const appOn = async (db: Database) => {
  const config = testSettings({ JWT_SECRET: undefined, ROLLUP_REFRESH_MS: 0 });
  const app = await buildApp(config, { db, logger: false });
  await app.ready();
  return app;
};

const HOUR = 3_600_000;
/** The time every answer is asked about: the demo week and the uploads, on a whole hour. */
export const RANGE = (() => {
  const end = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  return {
    start: new Date(end - 9 * 24 * HOUR).toISOString(),
    end: new Date(end).toISOString(),
    recent: new Date(end - 2 * 24 * HOUR).toISOString(),
  };
})();

const post = async (app: App, token: string, url: string, payload: unknown) => {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { ...bearer(token), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
};

/** Seeds and loads the database through the app; returns a token of an admin reaching everything. */
export async function loadDatabase(db: Database): Promise<string> {
  await seedDemo(db);
  await upsertClient(db, {
    clientId: 'backup-reader',
    clientSecret: 'backup-reader-secret',
    siteIds: '*',
    cameraIds: '*',
    admin: true,
  });
  const app = await appOn(db);
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'backup-reader', clientSecret: 'backup-reader-secret' },
    });
    const token: string = res.json().accessToken;
    const minute = (m: number) =>
      new Date(Math.floor(Date.now() / 60_000) * 60_000 - m * 60_000 + 17_000).toISOString();
    const upload = async (from: number) => {
      const ms = Array.from({ length: 40 }, (_, k) => from + k);
      await post(
        app,
        token,
        '/v1/edge/logs/sensor/batch',
        ms.flatMap((m) => [
          { sensorID: 10100, value: 1000 + m / 8, timestamp: minute(m) },
          { sensorID: 20100, value: -m, timestamp: minute(m) },
        ]),
      );
      await post(
        app,
        token,
        '/v1/edge/logs/meter/batch',
        ms.map((m) => ({ flowMeterID: 10301, totalVolume: 9e6 - m * 3.5, timestamp: minute(m) })),
      );
      await post(
        app,
        token,
        '/v1/edge/logs/pump/batch',
        ms.map((m) => ({
          sitePumpID: 10401,
          running: m % 3 > 0,
          pressure: 880 + m,
          timestamp: minute(m),
        })),
      );
      await post(
        app,
        token,
        '/v1/edge/logs/tank/batch',
        ms.map((m) => ({
          siteTankGroupID: 10501,
          entryTankLevel: 9 + m / 100,
          timestamp: minute(m),
        })),
      );
    };
    await upload(200); // rolled up below
    await refreshAll(db);
    await upload(20); // still marked stale when the backup is taken
    const alarm = (alarmType: string, minutesAgo: number) =>
      post(app, token, '/v1/edge/alarms', {
        siteId: 1,
        sitePumpID: 10401,
        alarmType,
        severity: 'major',
        message: `${alarmType} for the backup`,
        value: 12.5,
        timestamp: minute(minutesAgo),
      });
    await alarm('BackupOpen', 30);
    const resolved = await alarm('BackupResolved', 25);
    await post(app, token, '/v1/edge/alarms/resolve', {
      siteId: 1,
      alarms: [{ SiteAlarmLogID: resolved.SiteAlarmLogID, note: 'checked' }],
    });
    return token;
  } finally {
    await app.close();
  }
}

/** Every answer, by request: status, content type and the body's bytes (base64). */
export async function takeAnswers(db: Database, token: string): Promise<Record<string, string>> {
  const app = await appOn(db);
  const answers: Record<string, string> = {};
  const ask = async (method: 'GET' | 'POST', url: string, payload?: object, accept?: string) => {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...bearer(token),
        ...(payload ? { 'content-type': 'application/json' } : {}),
        ...(accept ? { accept } : {}),
      },
      payload: payload ? JSON.stringify(payload) : undefined,
    });
    expect(res.statusCode, `${method} ${url} ${JSON.stringify(payload)}: ${res.body}`).toBe(200);
    expect(res.rawPayload.length, url).toBeGreaterThan(2); // not an empty list
    const key = `${method} ${url} ${JSON.stringify(payload ?? '')} ${accept ?? ''}`;
    answers[key] = `${res.headers['content-type']}\n${res.rawPayload.toString('base64')}`;
  };
  try {
    const { start, end, recent } = RANGE;
    const kinds = [
      ['sensors', 'sensorIds', [10100, 10101, 20100]],
      ['meters', 'meterIds', [10301, 20301]],
      ['pumps', 'pumpIds', [10401, 20401]],
      ['tanks', 'tankGroupIds', [10501, 20501]],
    ] as const;
    for (const [path, field, ids] of kinds) {
      const url = `/v1/${path}/logs/load`;
      for (const interval of ['15m', '1h', '1d', 'all'])
        await ask('POST', url, { [field]: ids, start, end, interval });
      await ask('POST', url, { [field]: ids, start, end, interval: '1d', timeZone: 'site' });
      await ask('POST', url, {
        [field]: ids,
        start: recent,
        end,
        interval: '1h',
        timeZone: 'Asia/Kolkata',
      });
      await ask('POST', url, { [field]: ids, start: recent, end, interval: '15m' }, 'text/csv');
    }
    await ask('POST', '/v1/sensors/logs/raw', { sensorId: 10100, start: recent, end });
    await ask('POST', '/v1/sensors/logs/raw', { sensorId: 20100, start: recent, end }, 'text/csv');
    for (const r of allRoutes()) await ask('GET', r.url);
    const sites = [1, 2, 3, 4];
    await ask('POST', '/v1/transactions/logs/load', { siteIds: sites, start, end });
    await ask('POST', '/v1/transactions/logs/load', {
      siteIds: sites,
      start,
      end,
      motionCap: true,
    });
    await ask('POST', '/v1/transactions/logs/load', { siteIds: [1], start, end }, 'text/csv');
    await ask('POST', '/v1/transactions/change-logs', { start, end });
    await ask('POST', '/v1/edge/alarms/active', { siteIds: sites, limit: 100 });
    await ask('GET', '/v1/sites?page=1&perPage=100');
    await ask('GET', '/v1/sites?page=1&perPage=100&dataType=additional');
    await ask('GET', '/v1/admin/clients?page=1&perPage=100');
    const images = await db.query<{ uuid: string; kind: string }>(
      `SELECT uuid, kind FROM images ORDER BY uuid LIMIT 4`,
    );
    expect(images.length).toBeGreaterThan(0);
    for (const i of images)
      await ask(
        'GET',
        `/v1/images/${i.kind === 'ticket' ? 'tickets' : 'motion-capture'}/${i.uuid}`,
      );
    return answers;
  } finally {
    await app.close();
  }
}

/**
 * Each answer after the restore is the same bytes as before it, except that the averages of JSON
 * summaries may differ in their last bits: a restore rewrites the tables, so units are summed in
 * another order (40 against 39.99999999999999), which floating point does not forgive.
 */
export function expectSameAnswers(after: Record<string, string>, before: Record<string, string>) {
  expect(Object.keys(after)).toEqual(Object.keys(before));
  for (const key of Object.keys(before)) {
    if (after[key] === before[key]) continue;
    const [type, body] = before[key].split('\n');
    const [typeAfter, bodyAfter] = after[key].split('\n');
    expect(typeAfter, key).toBe(type);
    expect(type.startsWith('application/json') && key.includes('/logs/load'), key).toBe(true);
    const parse = (b: string) => JSON.parse(Buffer.from(b, 'base64').toString('utf8')) as unknown;
    expect(close(parse(bodyAfter), parse(body)), key).toBe(true);
  }
}

/** Equal JSON values, numbers within a relative 1e-12. */
function close(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number')
    return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => close(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.join() === kb.join() &&
      ka.every((k) => close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}
