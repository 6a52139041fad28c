import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeWith, openTestDb } from '../helper.js';
import { HAPROXY_CFG, sampleConnections, startPair, type Pair } from './balancer.js';
import { followStream, postWithRetry, sleep, type Answer, type FollowedStream } from './clients.js';
import { ROOT, waitFor } from './process.js';

// Two instances of the built server on one PostgreSQL and one Redis, behind a real HAProxy running
// docs/haproxy.cfg (the sample of docs/deployment.md): round robin, health checks on /health. Through
// the balancer: summaries answer alike from both instances; the rate limit is one count; gateways
// upload uniquely keyed logs and readings while a dashboard follows the live stream, and the
// instance serving the stream is killed with SIGKILL mid-load. Every upload answered 201 is stored
// once (the gateways retry what got no answer), the stream resumes on the other instance with
// Last-Event-ID and misses nothing, and the killed instance, restarted, is taken back. The tests
// run in order and share the processes.

const redisUrl = process.env.TEST_REDIS_URL;

const LIMIT = 200; // RATE_LIMIT_MAX of both instances
const BUDGET = LIMIT - 20; // requests a gateway makes at most (its own client, so its own count)
const LOG_SENSOR = 10100; // demo ids (site * 10000 + n): two sensors of site 1
const READING_SENSOR = 10101;
const GATEWAYS = 4;
const KILL_AFTER = 40; // logs acknowledged before the kill
const AFTER_RESUME = 30; // logs acknowledged after the stream resumed, before the load stops
// Logs a month back: before the demo week, so every key is new.
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 30 * 86_400_000;
const SPAN = 86_400_000;
const SECRET = 'secret-123456';

interface Acked {
  ts: string;
  value: number;
  answer: Answer;
  /** When its first try was sent, and when it was answered 201. */
  sentAt: number;
  at: number;
}

describeWith(['postgres', 'redis', 'haproxy'], 'two instances behind HAProxy [postgres]', () => {
  let db: Database;
  let pair: Pair;
  let lb: string;
  /** Tokens by role; each role is a client of its own, named afresh for every run (Redis outlives it). */
  const tokens: Record<string, string> = {};
  const run = randomBytes(4).toString('hex');
  let stream: FollowedStream | undefined;
  let sampler: ReturnType<typeof sampleConnections> | undefined;
  /** The instance killed in the third test. */
  let victim = -1;
  const logs: Acked[] = [];
  const readings: Acked[] = [];
  const name = (i: number) => pair.name(i);

  const get = (token: string, path: string) =>
    fetch(`${lb}${path}`, { headers: { authorization: `Bearer ${token}` } });
  /** Summaries of the log sensor over [from, to) asked through the balancer until both instances answered. */
  const summariesFromBoth = async (from: number, to: number) => {
    const bodies = new Map<string, unknown>();
    const request = {
      sensorIds: [LOG_SENSOR],
      start: new Date(from).toISOString(),
      end: new Date(to).toISOString(),
      interval: '15m',
    };
    for (let i = 0; i < 6 && bodies.size < 2; i++) {
      const res = await postWithRetry(`${lb}/v1/sensors/logs/load`, tokens.reader, request);
      expect(res.status).toBe(200);
      bodies.set(res.servedBy!, res.body);
    }
    expect([...bodies.keys()].sort()).toEqual([name(0), name(1)]);
    return [...bodies.values()] as { count: number }[][];
  };

  beforeAll(async () => {
    db = await openTestDb('postgres');
    await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }));
    const [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
    const roles = [
      'setup',
      'reader',
      'limited',
      'readings',
      ...Array.from({ length: GATEWAYS }, (_, g) => `gw${g}`),
    ];
    for (const role of roles)
      await upsertClient(db, { clientId: `${role}-${run}`, clientSecret: SECRET, siteIds: '*' });
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // What every instance must share: docs/deployment.md.
    pair = await startPair(
      {
        HOST: '127.0.0.1',
        DATABASE_URL: url.toString(),
        DEMO: '0',
        JWT_SECRET: 'haproxy-test-secret-0123456789abcdef',
        REDIS_URL: redisUrl!,
        RATE_LIMIT_MAX: String(LIMIT),
      },
      `sm-haproxy-${run}`,
    );
    lb = pair.lb;
    // Tokens through the balancer: whichever instance issues one, every instance accepts it.
    for (const role of roles) {
      const res = await postWithRetry(`${lb}/token`, '', {
        clientId: `${role}-${run}`,
        clientSecret: SECRET,
      });
      expect(res.status).toBe(200);
      tokens[role] = res.body.accessToken;
    }
  });

  afterAll(async () => {
    sampler?.stop();
    stream?.close();
    await pair?.close();
    await db?.close();
  });

  it('spreads requests over both instances, which answer summaries alike', async () => {
    const servedBy: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await get(tokens.reader, '/v1/sites?page=1&perPage=5');
      expect(res.status).toBe(200);
      expect((await res.json()).total).toBe(2);
      servedBy.push(res.headers.get('x-served-by')!);
    }
    expect(new Set(servedBy)).toEqual(new Set([name(0), name(1)]));
    // Logs over two hours, a day before the load's, uploaded through the balancer.
    const from = BASE - SPAN;
    for (let m = 0; m < 120; m += 5) {
      const res = await postWithRetry(`${lb}/v1/edge/logs/sensor`, tokens.setup, {
        sensorID: LOG_SENSOR,
        value: m % 7,
        timestamp: new Date(from + m * 60_000).toISOString(),
      });
      expect(res.body).toEqual({ received: 1, stored: 1, duplicates: 0 });
    }
    const [one, two] = await summariesFromBoth(from, from + 2 * 3_600_000);
    expect(one).toEqual(two);
    expect(one).toHaveLength(8);
    expect(one.reduce((n, s) => n + s.count, 0)).toBe(24);
  });

  it('counts one rate limit across both instances', async () => {
    const remaining: number[] = [];
    const servedBy = new Map<string, number>();
    for (let i = 0; i < LIMIT; i++) {
      const res = await get(tokens.limited, '/v1/sites?page=1&perPage=1');
      expect(res.status).toBe(200);
      await res.body?.cancel();
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
      const by = res.headers.get('x-served-by')!;
      servedBy.set(by, (servedBy.get(by) ?? 0) + 1);
    }
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    // Round robin: each instance saw about half, and counted the other's.
    expect(servedBy.get(name(0))).toBeGreaterThan(LIMIT / 4);
    expect(servedBy.get(name(1))).toBeGreaterThan(LIMIT / 4);
    const refused = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await get(tokens.limited, '/v1/sites?page=1&perPage=1');
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      await res.body?.cancel();
      refused.add(res.headers.get('x-served-by')!);
    }
    expect(refused).toEqual(new Set([name(0), name(1)]));
  });

  it(
    'loses no acknowledged upload and no stream event when an instance is killed mid-load',
    { timeout: 60_000 },
    async () => {
      stream = followStream(lb, tokens.reader, 'siteIds=1');
      const snapshot = await stream.next((e) => e.type === 'snapshot');
      const first = stream.connections[0];
      expect(first.status).toBe(200);
      victim = [name(0), name(1)].indexOf(first.servedBy!);
      expect(victim).toBeGreaterThanOrEqual(0);
      const survivor = name(1 - victim);

      // The load: gateways upload single logs of distinct times, one more gateway readings of
      // rising times, each request retried until answered; acknowledged = answered 201.
      let stop = false;
      const logGateway = async (g: number) => {
        let sent = 0;
        for (let j = 0; !stop && sent < BUDGET; j++) {
          const ts = new Date(BASE + (j * GATEWAYS + g) * 1000).toISOString();
          const value = g * 10_000 + j;
          const sentAt = Date.now();
          const answer = await postWithRetry(`${lb}/v1/edge/logs/sensor`, tokens[`gw${g}`], {
            sensorID: LOG_SENSOR,
            value,
            timestamp: ts,
          });
          sent += answer.attempts;
          expect(answer.status, JSON.stringify(answer)).toBe(201);
          logs.push({ ts, value, answer, sentAt, at: Date.now() });
          await sleep(20); // at most 50 a second each, so the budget outlasts the kill and resumption
        }
      };
      const readingStart = Date.now();
      const readingGateway = async () => {
        let tries = 0;
        for (let k = 1; !stop && tries < BUDGET; k++) {
          const ts = new Date(readingStart + k * 1000).toISOString();
          const sentAt = Date.now();
          const answer = await postWithRetry(`${lb}/v1/edge/readings/sensor`, tokens.readings, {
            sensorID: READING_SENSOR,
            value: k,
            timestamp: ts,
          });
          tries += answer.attempts;
          expect(answer.status, JSON.stringify(answer)).toBe(201);
          readings.push({ ts, value: k, answer, sentAt, at: Date.now() });
          await sleep(20);
        }
      };
      // The connections each instance holds on PostgreSQL, sampled while the load runs.
      sampler = sampleConnections(db, [pair.appName(0), pair.appName(1)]);
      const load = Promise.all([
        ...Array.from({ length: GATEWAYS }, (_, g) => logGateway(g)),
        readingGateway(),
      ]);
      load.catch(() => (stop = true));
      // A wait that ends at once should the load fail (a gateway got an unexpected answer).
      const orLoad = <T>(wait: Promise<T>) =>
        Promise.race([wait, load.then(() => new Promise<never>(() => {}))]);

      await orLoad(waitFor(() => (logs.length >= KILL_AFTER ? true : undefined), 20_000));
      const killedAt = Date.now();
      await pair.kill(victim);

      // HAProxy's checks take it out...
      await waitFor(
        async () => ((await pair.states())[name(victim)] === 'DOWN' ? true : undefined),
        10_000,
      );
      const downAfter = Date.now() - killedAt;
      // ...and the stream comes back on the survivor, with the id of the last event it had.
      const resumed = await orLoad(
        waitFor(() => stream!.connections.find((c, i) => i > 0 && c.status === 200), 15_000),
      );
      await orLoad(
        waitFor(
          () =>
            logs.filter((l) => l.sentAt > resumed.at).length >= AFTER_RESUME ? true : undefined,
          20_000,
        ),
      );
      stop = true;
      await load;
      sampler.stop();
      // At most its pool (10) and its LISTEN connection (docs/deployment.md).
      const { peak } = sampler;
      expect(Math.max(...peak)).toBeLessThanOrEqual(11);
      expect(Math.min(...peak)).toBeGreaterThan(0);

      // Every acknowledged log is stored, once, with its value; nothing else is.
      const rows = await db.query<{ ts: Date; value: number }>(
        'SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts',
        [LOG_SENSOR, new Date(BASE), new Date(BASE + SPAN)],
      );
      const stored = new Map(rows.map((r) => [r.ts.toISOString(), r.value]));
      expect(rows).toHaveLength(logs.length);
      expect(stored.size).toBe(logs.length);
      for (const l of logs) expect(stored.get(l.ts), l.ts).toBe(l.value);
      // Each answer counts its record stored, or a duplicate when an earlier try was stored but
      // its answer lost: together, once each.
      const sum = (k: 'stored' | 'duplicates') => logs.reduce((n, l) => n + l.answer.body[k], 0);
      expect(sum('stored') + sum('duplicates')).toBe(logs.length);
      for (const l of logs) expect(l.answer.body.received).toBe(1);
      const current = await db.query<{ record: { value: number } }>(
        `SELECT record FROM current_readings WHERE equipment_kind = 'sensor' AND equipment_id = $1`,
        [READING_SENSOR],
      );
      expect(current[0].record.value).toBe(readings.at(-1)!.value);

      // The stream: one `logs` event per stored log and one `reading` event per stored reading,
      // each exactly once, though the connection broke; one snapshot only (it resumed).
      const logsSeen = () =>
        stream!.events
          .filter((e) => e.type === 'logs' && e.data.ids.includes(LOG_SENSOR))
          .filter((e) => Date.parse(e.data.from) >= BASE && Date.parse(e.data.from) < BASE + SPAN);
      await waitFor(() => (logsSeen().length >= logs.length ? true : undefined), 15_000).catch(
        () => {
          throw new Error(`stream: ${logsSeen().length} of ${logs.length} logs events`);
        },
      );
      const readingValues = () =>
        stream!.events
          .filter((e) => e.type === 'reading' && e.data.record.sensorID === READING_SENSOR)
          .map((e) => e.data.record.value);
      await waitFor(
        () => (readingValues().includes(readings.at(-1)!.value) ? true : undefined),
        15_000,
      );
      await sleep(300); // anything delivered twice would come now
      const seen = logsSeen().map((e) => {
        expect(e.data).toMatchObject({ siteId: 1, kind: 'sensor', count: 1 });
        return new Date(e.data.from).toISOString();
      });
      expect(seen.sort()).toEqual(logs.map((l) => l.ts).sort());
      expect(readingValues()).toEqual(readings.map((r) => r.value));
      expect(stream.events.filter((e) => e.type === 'snapshot')).toEqual([snapshot]);

      // The resumed connection: on the other instance, with the last id received before the break.
      const broken = stream.connections[0];
      const beforeBreak = stream.events.filter((e) => e.connection === 0).at(-1)!;
      expect(resumed.servedBy).toBe(survivor);
      expect(resumed.lastEventId).toBe(beforeBreak.id);
      for (const c of stream.connections.slice(1)) expect(c.lastEventId).not.toBeNull();
      // Uploads sent and answered while no stream was open arrived after the resumption.
      const meanwhile = logs.filter((l) => l.sentAt > broken.ended! && l.at < resumed.at);
      expect(meanwhile.length).toBeGreaterThan(0);
      const resumedIndex = stream.connections.indexOf(resumed);
      for (const l of meanwhile)
        expect(
          logsSeen().find((e) => new Date(e.data.from).toISOString() === l.ts)!.connection,
        ).toBeGreaterThanOrEqual(resumedIndex);

      const retried = logs.filter((l) => l.answer.attempts > 1);
      console.info(
        `haproxy: ${logs.length} logs and ${readings.length} readings acknowledged; ` +
          `${retried.length} logs retried (${sum('duplicates')} of them stored by a try whose answer was lost: ` +
          `${[...new Set(retried.flatMap((l) => l.answer.failures))].join(', ')}); ` +
          `${name(victim)} down after ${downAfter} ms; stream back ${resumed.at - broken.ended!} ms after the break ` +
          `(${meanwhile.length} logs acknowledged meanwhile); database connections at most ${peak.join(' and ')}`,
      );
    },
  );

  it('takes the killed instance back once it is restarted on its port', async () => {
    expect(victim).toBeGreaterThanOrEqual(0);
    await pair.start(victim);
    await waitFor(
      async () => ((await pair.states())[name(victim)] === 'UP' ? true : undefined),
      10_000,
    );
    const servedBy = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await get(tokens.reader, '/v1/sites?page=1&perPage=5');
      expect(res.status).toBe(200);
      await res.body?.cancel();
      servedBy.add(res.headers.get('x-served-by')!);
    }
    expect(servedBy).toEqual(new Set([name(0), name(1)]));
    // It answers as the other does, the logs written while it was dead included.
    const [one, two] = await summariesFromBoth(BASE, BASE + SPAN);
    expect(one).toEqual(two);
    expect(one.reduce((n, s) => n + s.count, 0)).toBe(logs.length);
    // A stream resumed on it from the dashboard's last id gets what came since, and only that.
    const lastId = stream!.events.at(-1)!.id;
    const value = readings.at(-1)!.value + 1;
    const res = await postWithRetry(`${lb}/v1/edge/readings/sensor`, tokens.readings, {
      sensorID: READING_SENSOR,
      value,
      timestamp: new Date(Date.parse(readings.at(-1)!.ts) + 1000).toISOString(),
    });
    expect(res.body).toEqual({ received: 1, stored: 1, duplicates: 0 });
    let resumed: FollowedStream | undefined;
    for (let i = 0; i < 4; i++) {
      resumed = followStream(lb, tokens.reader, 'siteIds=1', { lastEventId: lastId });
      await waitFor(() => resumed!.connections[0].status ?? resumed!.connections[0].error);
      if (resumed.connections[0].servedBy === name(victim)) break;
      resumed.close();
    }
    try {
      expect(resumed!.connections[0].servedBy).toBe(name(victim));
      const got = await resumed!.next((e) => e.type === 'reading');
      expect(got.data.record).toMatchObject({ sensorID: READING_SENSOR, value });
      expect(resumed!.events).toEqual([got]);
    } finally {
      resumed?.close();
    }
  });
});

describe('docs/deployment.md', () => {
  it('shows the HAProxy configuration the balancer test runs, as it is', () => {
    const cfg = readFileSync(HAPROXY_CFG, 'utf8');
    const doc = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
    expect(doc).toContain(`\`\`\`haproxy\n${cfg}\`\`\``);
  });
});
