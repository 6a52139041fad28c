import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { parseAlarm, storeAlarms } from '../../src/alarms/send.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeWith, instrument, openTestDb, testSettings } from '../helper.js';
import { SENSOR } from '../telemetry/fixtures.js';
import { signal } from '../wait.js';
import { openStream, closeStreams } from './fixtures.js';

// Two service instances on one PostgreSQL (each its own pool), as behind a load balancer: an
// upload through one reaches a subscriber of the other; a client resumes on the other instance;
// an event committed late by a transaction that began early still reaches everyone, live and on
// resume; and when an instance shuts down, its clients reconnect to the other without a gap.
// PostgreSQL only: the embedded database belongs to one process.

describeWith(['postgres'], 'GET /v1/stream across instances [postgres]', () => {
  let db: Database;
  let second: Database;
  const apps: FastifyTypebox[] = [];
  const bases: string[] = [];
  const notices: string[][] = [];
  let token: string;
  beforeAll(async () => {
    db = await openTestDb('postgres');
    await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }));
    const [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
    second = await openPostgres(process.env.TEST_DATABASE_URL!, { schema });
    for (const pool of [db, second]) {
      // The wake-ups each instance receives (another instance's id; '' when it (re)connects).
      const received: string[] = [];
      notices.push(received);
      const listening = instrument(pool, (view) => ({
        listen: (channel, onNotify) =>
          view.listen(channel, (from) => (received.push(from), onNotify(from))),
      }));
      // The slowest fallback poll there is (60 s, the longest STREAM_POLL_MS; the first comes a
      // whole period after a stream starts, past any wait below): deliveries here come from the
      // NOTIFY wake-ups.
      const app = await buildApp(testSettings({ STREAM_POLL_MS: 60_000 }), {
        db: listening,
        logger: false,
      });
      bases.push(await app.listen({ port: 0, host: '127.0.0.1' }));
      apps.push(app);
    }
    await upsertClient(db, { clientId: 'c', clientSecret: 'secret-123456', siteIds: '*' });
    token = (
      await apps[0].inject({
        method: 'POST',
        url: '/token',
        payload: { clientId: 'c', clientSecret: 'secret-123456' },
      })
    ).json().accessToken;
  });
  afterAll(async () => {
    for (const app of apps.slice(1)) await app.close(); // the first one shut down in a test
    await second?.close();
    await db?.close();
  });
  afterEach(closeStreams);

  let n = 0;
  const reading = async (via: number) => {
    const value = ++n;
    const res = await apps[via].inject({
      method: 'POST',
      url: '/v1/edge/readings/sensor',
      headers: bearer(token),
      payload: { sensorID: SENSOR, value, timestamp: new Date(Date.now() + n).toISOString() },
    });
    expect(res.statusCode).toBe(201);
    return value;
  };
  const valueIs = (v: number) => (e: { type: string; data: any }) =>
    e.type === 'reading' && e.data.record.value === v;

  it('an upload through one instance reaches the subscribers of the other, woken by a NOTIFY', async () => {
    const s = openStream(bases[1], token, { siteIds: '1' });
    await s.next((e) => e.type === 'snapshot');
    const woken = notices[1].filter(Boolean).length;
    const v = await reading(0);
    // Instance 1 has not polled since the stream began (its first poll is 60 s after): the event
    // reaches it because instance 0 woke it.
    await s.next(valueIs(v));
    expect(notices[1].filter(Boolean).length).toBeGreaterThan(woken);
    s.close();
  });

  it('a client resumes on the other instance with its Last-Event-ID and misses nothing', async () => {
    const s = openStream(bases[0], token, { siteIds: '1' });
    await s.next((e) => e.type === 'snapshot');
    const last = await s.next(valueIs(await reading(0)));
    s.close();
    const missed = [await reading(0), await reading(1), await reading(0)];
    const r = openStream(bases[1], token, { siteIds: '1', lastEventId: last.id });
    await r.next(valueIs(missed[2]));
    expect(r.events.map((e) => e.data.record?.value)).toEqual(missed);
    r.close();
  });

  it('an event committed late by a transaction that began before others is delivered live and on resume', async () => {
    const live = openStream(bases[1], token, { siteIds: '1' });
    const resumer = openStream(bases[0], token, { siteIds: '1' });
    await live.next((e) => e.type === 'snapshot');
    await resumer.next((e) => e.type === 'snapshot');
    const held = signal();
    const stored = signal();
    const late = db.transaction(async (tx) => {
      await storeAlarms(tx, 1, [
        parseAlarm(
          { alarmType: 'Late', message: 'committed last', timestamp: new Date().toISOString() },
          0,
          '',
        ),
      ]);
      stored.resolve();
      await held.promise;
    });
    await stored.promise; // the alarm's transaction has its id and its event row, not yet committed
    const v = await reading(0);
    const after = await resumer.next(valueIs(v));
    resumer.close();
    held.resolve();
    await late;
    expect((await live.next((e) => e.type === 'alarm')).data).toMatchObject({
      siteId: 1,
      status: 'created',
      alarm: { AlarmType: 'Late' },
    });
    // The id the resumer kept was taken while the alarm's transaction ran: the alarm is replayed.
    const again = openStream(bases[1], token, { siteIds: '1', lastEventId: after.id });
    expect((await again.next(() => true)).data).toMatchObject({
      status: 'created',
      alarm: { AlarmType: 'Late' },
    });
    live.close();
    again.close();
  });

  it('when an instance shuts down, its clients reconnect to the other and miss nothing', async () => {
    let target = 0;
    // The client's "load balancer": whichever instance is up.
    const s = openStream('http://balancer', token, { siteIds: '1', route: () => bases[target] });
    await s.next((e) => e.type === 'snapshot');
    const before = await reading(1);
    await s.next(valueIs(before));
    target = 1;
    const closing = apps[0].close();
    const during = await reading(1);
    await closing;
    const after = await reading(1);
    await s.next(valueIs(after));
    expect(s.connects).toHaveLength(2);
    expect(s.events.filter((e) => e.type === 'snapshot')).toHaveLength(1);
    expect(s.events.filter((e) => e.type === 'reading').map((e) => e.data.record.value)).toEqual([
      before,
      during,
      after,
    ]);
    s.close();
  });
});
