import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeWith } from '../helper.js';
import { mqttUrl } from '../needs.js';
import { kill } from './balancer.js';
import { followStream, postWithRetry, sleep, type FollowedStream } from './clients.js';
import { Cluster, HAPROXY_PG_CFG, PATRONI_CFG, type Member } from './cluster.js';
import { freePort, ROOT, startServerProcess, waitFor, type Running } from './process.js';

// The service through a database failover (docs/deployment.md#database-failover): a Patroni cluster
// of a primary and a synchronous standby behind HAProxy (test/operations/cluster.ts), the real server
// on it over HTTP, 8 uploaders under load (7 of sensor logs, 1 of alarms), a reader, a live stream,
// and a gateway publishing log batches over MQTT (the broker delivers them to the service, which
// acknowledges each one only once it is committed, and answers it on the message's response topic).
// The primary's postmaster is killed with SIGKILL, then, once the old primary is back as the
// synchronous standby, a planned `patronictl switchover`. Every log answered 201 is stored, no upload
// is answered an error around either event (the new primary writes within WRITE_TIMEOUT_MS), no
// request is held past its bound, writes succeed again within 30 s, every alarm sent counts once,
// and the background work (the live stream's follower, the rollup refresher, retention) goes on on
// the new primary without a restart; every MQTT message published is stored and answered, and every
// one answered was stored; the metrics count each event as a failover, and the time
// without a writable primary. The figures it measures are printed at the end.

const WRITE_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 5000;
/** What a request may take beyond its bound (the event loop of a loaded machine). */
const SLACK_MS = 2000;
const UPLOADERS = 7;
const BATCH = 20;
const SENSORS = [10100, 10101, 20100, 20101];
const SECRET = 'secret-123456';
// Logs a month back, each uploader in a window of its own: every key is new.
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 30 * 86_400_000;

interface Sent {
  kind: 'logs' | 'alarm' | 'read';
  status: number | string;
  at: number;
  ms: number;
  keys?: [number, number][];
}

describeWith(['patroni', 'mosquitto'], 'the service through a database failover [patroni]', () => {
  let cluster: Cluster;
  let db: Database;
  let server: Running | undefined;
  let base = '';
  let token = '';
  let stream: FollowedStream | undefined;
  const sent: Sent[] = [];
  let loading = false;
  let load: Promise<unknown> | undefined;
  let alarmsSent = 0;
  const figures: Record<string, number | string> = {};
  let metricsUrl = '';
  let gw: MqttClient | undefined;
  const mqttPrefix = `failover-${randomBytes(4).toString('hex')}/`;
  /** Each MQTT message published (the broker took it), by its correlation data: its keys, and the answer once it came. */
  const published = new Map<
    string,
    { keys: [number, number][]; answer?: Record<string, unknown> }
  >();

  /** The failover counters the server's metrics port shows now. */
  const dbMetrics = async () => {
    const text = await (await fetch(metricsUrl)).text();
    const read = (name: string) => {
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
      if (!m) throw new Error(`${name} not in the metrics:\n${text.slice(0, 2000)}`);
      return Number(m[1]);
    };
    return {
      failovers: read('site_monitor_db_failovers_total'),
      unwritableSeconds: read('site_monitor_db_unwritable_seconds_total'),
    };
  };

  const post = async (kind: Sent['kind'], path: string, body: unknown, keys?: Sent['keys']) => {
    const at = Date.now();
    let status: number | string;
    try {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch (err) {
      status = String((err as Error).cause ?? err);
    }
    sent.push({ kind, status, at, ms: Date.now() - at, keys });
    return status;
  };

  const uploader = async (u: number) => {
    const sensor = SENSORS[u % SENSORS.length];
    for (let n = 0; loading; n += BATCH) {
      const keys: [number, number][] = [];
      const body = Array.from({ length: BATCH }, (_, i) => {
        const ts = BASE + u * 3 * 3_600_000 + (n + i) * 100;
        keys.push([sensor, ts]);
        return { sensorID: sensor, value: (n + i) % 97, timestamp: new Date(ts).toISOString() };
      });
      await post('logs', '/v1/edge/logs/sensor/batch', body, keys);
      await sleep(20);
    }
  };
  const alarmer = async () => {
    while (loading) {
      const status = await post('alarm', '/v1/edge/alarms', {
        siteId: 1,
        alarmType: 'failover-test',
        message: 'sent under failover',
        timestamp: new Date().toISOString(),
      });
      if (status === 201) alarmsSent++;
      await sleep(50);
    }
  };
  const reader = async () => {
    while (loading) {
      const at = Date.now();
      let status: number | string;
      try {
        const res = await fetch(`${base}/v1/sites?page=1&perPage=5`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(60_000),
        });
        await res.arrayBuffer();
        status = res.status;
      } catch (err) {
        status = String(err);
      }
      sent.push({ kind: 'read', status, at, ms: Date.now() - at });
      await sleep(100);
    }
  };

  /** A gateway over MQTT: log batches of site 1 at QoS 1, each with a response topic. */
  const gateway = async () => {
    const sensor = SENSORS[1];
    const responseTopic = `${mqttPrefix}gw/answers`;
    gw!.on('message', (topic, body, packet) => {
      const sent = published.get(packet.properties?.correlationData?.toString('hex') ?? '');
      if (topic === responseTopic && sent) sent.answer = JSON.parse(body.toString());
    });
    await gw!.subscribeAsync(responseTopic, { qos: 1 });
    for (let n = 0; loading; n += BATCH) {
      const keys: [number, number][] = [];
      const body = Array.from({ length: BATCH }, (_, i) => {
        // A window of its own, after the uploaders' (every key new).
        const ts = BASE + (UPLOADERS + 1) * 3 * 3_600_000 + (n + i) * 100;
        keys.push([sensor, ts]);
        return { sensorID: sensor, value: (n + i) % 89, timestamp: new Date(ts).toISOString() };
      });
      const correlation = randomBytes(8);
      published.set(correlation.toString('hex'), { keys });
      await gw!.publishAsync(
        `${mqttPrefix}site-monitor/v1/sites/1/logs/sensor`,
        JSON.stringify(body),
        {
          qos: 1,
          properties: { responseTopic, correlationData: correlation },
        },
      );
      await sleep(50);
    }
  };

  /** How many of these (sensor, ms) keys sensor_logs holds. */
  const stored = async (keys: [number, number][]) => {
    let found = 0;
    for (const sensor of SENSORS) {
      const ts = keys.filter(([s]) => s === sensor).map(([, t]) => new Date(t).toISOString());
      if (!ts.length) continue;
      const [{ n }] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sensor_logs WHERE sensor_id = $1 AND ts = ANY($2::timestamptz[])',
        [sensor, ts],
      );
      found += n;
    }
    return found;
  };

  /** Uploads started after `t` and answered 201: the first one's answer time. */
  const firstWriteAfter = (t: number) =>
    waitFor(() => {
      const ok = sent.filter((s) => s.kind === 'logs' && s.at > t && s.status === 201);
      return ok.length ? Math.min(...ok.map((s) => s.at + s.ms)) : undefined;
    }, 60_000).catch((err) => {
      const after = sent.filter((s) => s.at > t - 5000);
      const statuses = after.map((s) => `${s.kind}@${s.at - t}+${s.ms}:${s.status}`).join(' ');
      throw new Error(
        `no upload written after ${t}: ${err}\n${statuses.slice(-3000)}\n--- server\n${server?.stderr().slice(-4000)}\n${cluster.logs()}`,
      );
    });

  /** The longest time between two acknowledged log uploads in the 30 s after t (and before `until`), and when it ended. */
  const writeGap = (t: number, until = Infinity) => {
    const acks = sent
      .filter((s) => s.kind === 'logs' && s.status === 201)
      .map((s) => s.at + s.ms)
      .filter((a) => a > t && a < Math.min(t + 30_000, until))
      .sort((a, b) => a - b);
    let gap = { length: 0, end: t };
    let last = t;
    for (const a of acks) {
      if (a - last > gap.length) gap = { length: a - last, end: a };
      last = a;
    }
    if (!acks.length) gap = { length: Infinity, end: Infinity };
    return gap;
  };

  const leaderOther = (name: string) => (ms: Member[]) =>
    ms.some((m) => m.role === 'leader' && m.name !== name && m.state === 'running');

  beforeAll(async () => {
    const started = Date.now();
    cluster = await Cluster.start();
    figures.clusterUpMs = Date.now() - started;
    db = await openPostgres(cluster.url, { max: 2 });
    await migrate(db);
    await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }));
    await upsertClient(db, { clientId: 'failover', clientSecret: SECRET, siteIds: '*' });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    ({ server, base } = await startServerProcess({
      METRICS_PORT: String(metricsPort),
      DATABASE_URL: cluster.url,
      DEMO: '0',
      JWT_SECRET: 'failover-test-secret-0123456789abcdef',
      WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS),
      QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'warn',
      // Retention runs every 2 s (keeping everything): a pass goes on through the failover.
      RETENTION_DAYS: '36500',
      RETENTION_INTERVAL_MS: '2000',
      // Gateways over MQTT: topics, host id and session of this test's own on the shared broker.
      MQTT_URL: mqttUrl(),
      MQTT_TOPIC_PREFIX: mqttPrefix,
      MQTT_HOST_ID: mqttPrefix.slice(0, -1),
      MQTT_CLIENT_ID: `${mqttPrefix.slice(0, -1)}-svc`,
      MQTT_SESSION_EXPIRY_S: '300',
    }));
    gw = await mqtt.connectAsync(mqttUrl(), {
      protocolVersion: 5,
      clientId: `${mqttPrefix.slice(0, -1)}-gw`,
      reconnectPeriod: 1000,
    });
    // The service's subscriptions are up once a message of ours is answered.
    await waitFor(async () => ((await fetch(`${base}/health`)).status === 200 ? true : undefined));
    const res = await postWithRetry(`${base}/token`, '', {
      clientId: 'failover',
      clientSecret: SECRET,
    });
    token = res.body.accessToken;
    stream = followStream(base, token, 'siteIds=1');
    await stream.next((e) => e.type === 'snapshot');
  }, 180_000);

  afterAll(async () => {
    loading = false;
    await load;
    stream?.close();
    await gw?.endAsync();
    await kill(server);
    await db?.close();
    await cluster?.close();
    console.log(`failover figures: ${JSON.stringify(figures)}`);
  }, 60_000);

  it('a kill -9 of the primary, then a switchover, under load: nothing lost, no upload failed, back within 30 s', async () => {
    loading = true;
    load = Promise.all([
      ...Array.from({ length: UPLOADERS }, (_, u) => uploader(u)),
      alarmer(),
      reader(),
      gateway(),
    ]);
    // Load before the kill: uploads acknowledged.
    await waitFor(() =>
      sent.filter((s) => s.kind === 'logs' && s.status === 201).length > 40 ? true : undefined,
    );

    const first = await cluster.leader();
    const beforeKill = await dbMetrics();
    const killedAt = Date.now();
    cluster.killPostmaster(first);
    await cluster.waitFor(leaderOther(first), 'a new leader');
    figures.promotedAfterKillMs = Date.now() - killedAt;
    await firstWriteAfter(Date.now());
    // The metrics: one failover (at least: a connection may have reached each node in turn), and
    // the time without a writable primary, more than nothing and less than the 30 s allowed.
    const afterKill = await dbMetrics();
    figures.failoversCountedAtKill = afterKill.failovers - beforeKill.failovers;
    figures.unwritableSecondsAtKill = afterKill.unwritableSeconds - beforeKill.unwritableSeconds;
    expect(figures.failoversCountedAtKill).toBeGreaterThanOrEqual(1);
    expect(figures.unwritableSecondsAtKill).toBeGreaterThan(0);
    expect(figures.unwritableSecondsAtKill).toBeLessThan(30);

    // The old primary comes back as the synchronous standby; then a planned switchover to it.
    await cluster.waitFor(
      (ms) =>
        ms.some((m) => m.name === first && m.role === 'sync_standby' && m.state !== 'stopped'),
      'the old primary back as the synchronous standby',
      120_000,
    );
    figures.standbyBackAfterKillMs = Date.now() - killedAt;
    await sleep(2000);
    const second = await cluster.leader();
    const beforeSwitch = await dbMetrics();
    const switchedAt = Date.now();
    const sw = cluster.switchover(second, first);
    expect(await sw.exited, sw.stdout() + sw.stderr()).toBe(0);
    await cluster.waitFor(leaderOther(second), 'the switchover');
    await firstWriteAfter(Date.now());
    const afterSwitch = await dbMetrics();
    figures.failoversCountedAtSwitchover = afterSwitch.failovers - beforeSwitch.failovers;
    figures.unwritableSecondsAtSwitchover =
      afterSwitch.unwritableSeconds - beforeSwitch.unwritableSeconds;
    expect(figures.failoversCountedAtSwitchover).toBeGreaterThanOrEqual(1);
    expect(figures.unwritableSecondsAtSwitchover).toBeGreaterThan(0);
    expect(figures.unwritableSecondsAtSwitchover).toBeLessThan(30);

    // Background work on the new primary: a reading uploaded now reaches the live stream.
    const value = 4242.5;
    const from = stream!.events.length;
    const reading = await postWithRetry(`${base}/v1/edge/readings/sensor`, token, {
      sensorID: 10100,
      value,
      timestamp: new Date().toISOString(),
    });
    expect(reading.status).toBe(201);
    await stream!.next((e) => e.type === 'reading' && e.data.record?.value === value, {
      from,
      ms: 30_000,
    });
    await sleep(3000);
    loading = false;
    await load;

    // Writing again: the longest stretch without a log upload acknowledged, within 30 s after each
    // event (backends of a killed postmaster may still commit for a moment: the stretch, not the
    // first acknowledgement after the kill, is the time without a primary).
    const killGap = writeGap(killedAt, switchedAt);
    figures.noWritesAfterKillMs = killGap.length;
    figures.writingAgainAfterKillMs = killGap.end - killedAt;
    expect(figures.writingAgainAfterKillMs).toBeLessThan(30_000);
    const switchGap = writeGap(switchedAt);
    figures.noWritesAfterSwitchoverMs = switchGap.length;
    figures.writingAgainAfterSwitchoverMs = switchGap.end - switchedAt;

    // Every upload answered; none with an error, around either event.
    const uploads = sent.filter((s) => s.kind !== 'read');
    const errors = uploads.filter((s) => s.status !== 201);
    figures.uploads = uploads.length;
    figures.uploadErrors = errors.length;
    figures.uploadErrorStatuses = [...new Set(errors.map((e) => String(e.status)))].join(',');
    figures.worstUploadMs = Math.max(...uploads.map((s) => s.ms));
    const reads = sent.filter((s) => s.kind === 'read');
    figures.reads = reads.length;
    figures.readsNot200 = reads.filter((s) => s.status !== 200).length;
    figures.worstReadMs = Math.max(...reads.map((s) => s.ms));
    expect(
      errors.map((e) => `${e.kind} at ${e.at - killedAt} ms, after ${e.ms} ms: ${e.status}`),
    ).toEqual([]);
    // No request held past its bound; reads answered 200 or 503, never anything else.
    expect(figures.worstUploadMs).toBeLessThan(WRITE_TIMEOUT_MS + SLACK_MS);
    expect(figures.worstReadMs).toBeLessThan(QUERY_TIMEOUT_MS + SLACK_MS);
    expect(reads.filter((s) => s.status !== 200 && s.status !== 503)).toEqual([]);

    // Every acknowledged log is there (on the primary now, which was the standby at the kill).
    const acked = uploads
      .filter((s) => s.kind === 'logs' && s.status === 201)
      .flatMap((s) => s.keys!);
    figures.acknowledgedLogs = acked.length;
    expect(await stored(acked)).toBe(acked.length);

    // MQTT: what was answered is stored (the answer, like the PUBACK, follows the commit), and every
    // message published is answered and stored in the end: the service did not acknowledge one it
    // failed to store (the broker would not have delivered it again), it kept trying.
    const answeredKeys = [...published.values()].filter((m) => m.answer).flatMap((m) => m.keys);
    expect(await stored(answeredKeys)).toBe(answeredKeys.length);
    await waitFor(
      () => ([...published.values()].every((m) => m.answer) ? true : undefined),
      60_000,
    );
    const messages = [...published.values()];
    figures.mqttMessages = messages.length;
    figures.mqttAnswersWithDuplicates = messages.filter((m) => m.answer!.duplicates !== 0).length;
    expect(messages.filter((m) => m.answer!.received !== BATCH)).toEqual([]);
    const allKeys = messages.flatMap((m) => m.keys);
    expect(await stored(allKeys)).toBe(allKeys.length);
    // Each alarm sent counts once: Occurrences is the number of sends answered 201.
    const [{ occurrences }] = await db.query<{ occurrences: number }>(
      `SELECT occurrences FROM site_alarms WHERE alarm_type = 'failover-test' AND resolved_at IS NULL`,
    );
    figures.alarmsSent = alarmsSent;
    expect(occurrences).toBe(alarmsSent);

    // The rollup refresher on the new primary: every bucket the load marked is rolled up.
    await waitFor(
      async () =>
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM rollup_dirty'))[0].n === 0
          ? true
          : undefined,
      60_000,
    );
    // Retention and the refresher went on: none of them has failed since the switchover settled.
    const quietSince = server!.stderr().length;
    await sleep(5000);
    expect(server!.stderr().slice(quietSince)).not.toMatch(/failed/);
    expect(server!.child.exitCode).toBeNull();
  }, 240_000);
});

describe('docs/deployment.md', () => {
  it('shows the Patroni and HAProxy configurations the failover test runs, as they are', () => {
    const doc = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
    expect(doc).toContain(`\`\`\`yaml\n${readFileSync(PATRONI_CFG, 'utf8')}\`\`\``);
    expect(doc).toContain(`\`\`\`haproxy\n${readFileSync(HAPROXY_PG_CFG, 'utf8')}\`\`\``);
  });
});
