// Database failover benchmark (docs/deployment.md#database-failover): the cluster of the failover
// test (test/operations/cluster.ts: etcd, two Patroni nodes running PostgreSQL 15 with a synchronous
// standby, HAProxy checking Patroni's /primary), the real server on it, 8 uploaders of sensor-log
// batches for 60 s (closed loop, no retries, every key new); kill -9 of the primary's postmaster at
// about 20 s, then, once the old primary is back as the synchronous standby, a `patronictl
// switchover` at about 40 s. It reports, through both events: acknowledged records not stored
// (lost), the time to the first write after the kill, answers other than 201 by status, the worst
// latencies, and what the server's metrics counted (failovers, time without a writable primary).
//   npx tsx bench/failover.ts        (as root: PostgreSQL runs as the `postgres` user)
// Env: BENCH_FAILOVER_SECONDS (60), BENCH_FAILOVER_KILL_AT (20), BENCH_FAILOVER_SWITCHOVER_AT (40)
// seconds into the load, BENCH_FAILOVER_UPLOADERS (8), BENCH_FAILOVER_BATCH records (100).
import { upsertClient } from '../src/auth/clients.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { Cluster, type Member } from '../test/operations/cluster.js';
import { freePort, Histogram, reportSection, startServer } from './harness.js';
import { record } from './record.js';

const SECONDS = Number(process.env.BENCH_FAILOVER_SECONDS ?? 60);
const KILL_AT = Number(process.env.BENCH_FAILOVER_KILL_AT ?? 20);
const SWITCHOVER_AT = Number(process.env.BENCH_FAILOVER_SWITCHOVER_AT ?? 40);
const UPLOADERS = Number(process.env.BENCH_FAILOVER_UPLOADERS ?? 8);
const BATCH = Number(process.env.BENCH_FAILOVER_BATCH ?? 100);
const SECRET = 'bench-secret-123456';
const SENSORS = [10100, 10101, 20100, 20101];
/** Each uploader writes 100 ms apart in a window of 12 hours of its own, a month back: every key is new. */
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 30 * 86_400_000;
const WINDOW_MS = 12 * 3_600_000;

interface Upload {
  /** ms since the load began */
  at: number;
  ms: number;
  status: number | string;
  sensor: number;
  /** the first key's timestamp; the batch's keys are BATCH of them 100 ms apart */
  first: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const clusterStarted = Date.now();
  const cluster = await Cluster.start();
  const clusterUpMs = Date.now() - clusterStarted;
  try {
    await record('failover', { postgres: cluster.url });
  } catch (err) {
    await cluster.close();
    throw err;
  }
  console.log(
    `cluster up in ${(clusterUpMs / 1000).toFixed(1)} s: ${JSON.stringify(await cluster.members())}`,
  );
  const db = await openPostgres(cluster.url, { max: 2 });
  let stop: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    await migrate(db);
    await importDocument(db, generateDemo({ sites: 2, transactionsPerSite: 0, imagesPerSite: 0 }));
    await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
    const port = await freePort();
    const metricsPort = await freePort();
    stop = await startServer(port, {
      DATABASE_URL: cluster.url,
      METRICS_PORT: String(metricsPort),
      RATE_LIMIT_MAX: '1000000000',
    });
    const base = `http://127.0.0.1:${port}`;
    const token = (
      (await (
        await fetch(`${base}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
        })
      ).json()) as { accessToken: string }
    ).accessToken;
    const metrics = async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
      return {
        failovers: read('site_monitor_db_failovers_total'),
        unwritable: read('site_monitor_db_unwritable_seconds_total'),
      };
    };

    const uploads: Upload[] = [];
    const t0 = Date.now();
    const now = () => Date.now() - t0;
    let loading = true;
    const uploader = async (u: number) => {
      const sensor = SENSORS[u % SENSORS.length];
      for (let n = 0; loading; n += BATCH) {
        const first = BASE + u * WINDOW_MS + n * 100;
        const body = Array.from({ length: BATCH }, (_, i) => ({
          sensorID: sensor,
          value: (n + i) % 97,
          timestamp: new Date(first + i * 100).toISOString(),
        }));
        const at = now();
        let status: number | string;
        try {
          const res = await fetch(`${base}/v1/edge/logs/sensor/batch`, {
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
        uploads.push({ at, ms: now() - at, status, sensor, first });
      }
    };
    const before = await metrics();
    const load = Promise.all(Array.from({ length: UPLOADERS }, (_, u) => uploader(u)));

    // The kill.
    await sleep(KILL_AT * 1000);
    const first = await cluster.leader();
    const atKill = await metrics();
    const killedAt = now();
    cluster.killPostmaster(first);
    console.log(`+${(killedAt / 1000).toFixed(1)} s: kill -9 of ${first}'s postmaster`);
    const other = (name: string) => (ms: Member[]) =>
      ms.some((m) => m.role === 'leader' && m.name !== name && m.state === 'running');
    await cluster.waitFor(other(first), 'a new leader');
    const promotedAt = now();
    console.log(`+${(promotedAt / 1000).toFixed(1)} s: a new leader`);
    await cluster.waitFor(
      (ms) =>
        ms.some((m) => m.name === first && m.role === 'sync_standby' && m.state !== 'stopped'),
      'the old primary back as the synchronous standby',
      120_000,
    );
    const standbyAt = now();
    console.log(`+${(standbyAt / 1000).toFixed(1)} s: ${first} back as the synchronous standby`);

    // The switchover, back to the first node.
    await sleep(Math.max(2000, SWITCHOVER_AT * 1000 - now()));
    const second = await cluster.leader();
    const atSwitch = await metrics();
    const switchedAt = now();
    const sw = cluster.switchover(second, first);
    const swCode = await sw.exited;
    console.log(
      `+${(switchedAt / 1000).toFixed(1)} s: patronictl switchover ${second} -> ${first}, exit ${swCode}\n${sw.stdout().trim()}`,
    );
    await cluster.waitFor(other(second), 'the switchover');
    const switchedDoneAt = now();
    await sleep(Math.max(10_000, SECONDS * 1000 - now()));
    loading = false;
    await load;
    const endedAt = now();
    const after = await metrics();

    // Lost: acknowledged keys not stored. Stored though not acknowledged: answered otherwise, committed.
    const keysOf = (us: Upload[]) => {
      const bySensor = new Map<number, string[]>();
      for (const u of us)
        for (let i = 0; i < BATCH; i++) {
          const list = bySensor.get(u.sensor) ?? bySensor.set(u.sensor, []).get(u.sensor)!;
          list.push(new Date(u.first + i * 100).toISOString());
        }
      return bySensor;
    };
    const countStored = async (us: Upload[]) => {
      let n = 0;
      for (const [sensor, ts] of keysOf(us))
        for (let i = 0; i < ts.length; i += 50_000) {
          const [row] = await db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM sensor_logs WHERE sensor_id = $1 AND ts = ANY($2::timestamptz[])',
            [sensor, ts.slice(i, i + 50_000)],
          );
          n += row.n;
        }
      return n;
    };
    const acked = uploads.filter((u) => u.status === 201);
    const failed = uploads.filter((u) => u.status !== 201);
    const ackedRecords = acked.length * BATCH;
    const storedAcked = await countStored(acked);
    const storedFailed = await countStored(failed);

    // Writing again after the kill: the first upload started after it that was answered 201, and
    // the longest stretch without any 201 answer in the 30 s after it.
    const answeredAt = (u: Upload) => u.at + u.ms;
    const firstAfter = (t: number) =>
      Math.min(...acked.filter((u) => u.at > t).map(answeredAt)) - t;
    const gap = (t: number, until: number) => {
      const acks = acked
        .map(answeredAt)
        .filter((a) => a > t && a < Math.min(t + 30_000, until))
        .sort((a, b) => a - b);
      let longest = 0;
      let end = t;
      let last = t;
      for (const a of acks) {
        if (a - last > longest) [longest, end] = [a - last, a];
        last = a;
      }
      return acks.length ? { longest, end: end - t } : { longest: Infinity, end: Infinity };
    };
    const killGap = gap(killedAt, switchedAt);
    const switchGap = gap(switchedAt, endedAt);

    const statuses = (us: Upload[]) => {
      const by = new Map<string, number>();
      for (const u of us)
        if (u.status !== 201) by.set(String(u.status), (by.get(String(u.status)) ?? 0) + 1);
      return by.size ? [...by].map(([s, n]) => `${s}: ${n}`).join(', ') : 'none';
    };
    const phases = [
      { name: 'before the kill', from: 0, to: killedAt },
      { name: 'kill -9 to switchover', from: killedAt, to: switchedAt },
      { name: 'switchover to end', from: switchedAt, to: Infinity },
    ];
    const lines: string[] = [];
    const f1 = (ms: number) => (ms / 1000).toFixed(1);
    const f2 = (ms: number) => (ms / 1000).toFixed(2);
    lines.push(
      `${UPLOADERS} uploaders of ${BATCH}-log sensor batches for ${f1(endedAt)} s (closed loop, no retries), server defaults (WRITE_TIMEOUT_MS 10000, QUERY_TIMEOUT_MS 5000); cluster built in ${f1(clusterUpMs)} s`,
      `kill -9 of ${first}'s postmaster at +${f1(killedAt)} s, ${second} leader ${f2(promotedAt - killedAt)} s later, ${first} back as the synchronous standby ${f1(standbyAt - killedAt)} s after the kill`,
      `patronictl switchover ${second} -> ${first} at +${f1(switchedAt)} s (exit ${swCode}), ${first} leader ${f2(switchedDoneAt - switchedAt)} s later`,
      '',
      '| through | uploads | answered 201 | other answers (by status) | worst latency | p99 |',
      '|---|---|---|---|---|---|',
    );
    for (const p of phases) {
      const us = uploads.filter((u) => u.at >= p.from && u.at < p.to);
      const h = new Histogram();
      for (const u of us) h.add(u.ms);
      lines.push(
        `| ${p.name} | ${us.length} | ${us.filter((u) => u.status === 201).length} | ${statuses(us)} | ${h.max} ms | ${h.pct(0.99).toFixed(1)} ms |`,
      );
    }
    const all = new Histogram();
    for (const u of uploads) all.add(u.ms);
    lines.push(
      `| whole run | ${uploads.length} | ${acked.length} | ${statuses(uploads)} | ${all.max} ms | ${all.pct(0.99).toFixed(1)} ms |`,
      '',
      `lost records (acknowledged, not stored): ${ackedRecords - storedAcked} of ${ackedRecords}`,
      `records of uploads answered otherwise that were stored all the same: ${storedFailed} of ${failed.length * BATCH}`,
      `kill -9: first write (an upload started after the kill answered 201) ${f2(firstAfter(killedAt))} s after it; longest stretch without a 201 in the 30 s after it ${f2(killGap.longest)} s, writing again ${f2(killGap.end)} s after the kill`,
      `switchover: first write ${f2(firstAfter(switchedAt))} s after it began; longest stretch without a 201 ${f2(switchGap.longest)} s, writing again ${f2(switchGap.end)} s after it began`,
      `worst uploads: ${[...uploads]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((u) => `${u.ms} ms (sent at +${f1(u.at)} s, ${u.status})`)
        .join(', ')}`,
      `server metrics: site_monitor_db_failovers_total +${atSwitch.failovers - atKill.failovers} at the kill, +${after.failovers - atSwitch.failovers} at the switchover (${after.failovers - before.failovers} in all); site_monitor_db_unwritable_seconds_total +${(atSwitch.unwritable - atKill.unwritable).toFixed(3)} s at the kill, +${(after.unwritable - atSwitch.unwritable).toFixed(3)} s at the switchover`,
    );
    reportSection('Database failover', lines.join('\n'));
  } finally {
    await stop?.();
    await db.close().catch(() => {});
    await cluster.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
