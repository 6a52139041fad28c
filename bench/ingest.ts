// Telemetry ingest benchmark (issue 4), in one run:
//   (a) batch sensor logs over HTTP, 1,000 records a request, several concurrent clients: records/s
//   (b) raw COPY of the same rows into the same table by a plain client (pg-copy-streams): rows/s
//   (c) single sensor readings over HTTP: requests/s, p50 and p99 latency, measured once the rollup
//       refresher has caught up with what (a) wrote (its backlog would otherwise run alongside)
//   (d) (a) and (c) on PGlite (embedded, in a temporary DATA_DIR)
// (a) and (c) run with group commit (the default) and without it (GROUP_COMMIT=0).
//   npx tsx bench/ingest.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DURATION seconds a
// run (default 10), BENCH_BATCH_CONNECTIONS (default 4), BENCH_SINGLE_CONNECTIONS (default 32),
// BENCH_SKIP_PGLITE=1, BENCH_READING_SITES=n (single readings go to the first n of the 50 sites;
// 1: one busy site), BENCH_SUBSCRIBERS=n (n live stream subscribers of site 1 during every run;
// the figures go to the section "Ingest with n stream subscribers"), BENCH_FSYNC_PROBE=<directory on the
// database's disk> (the disk's fdatasync times beside each run, bench/fsync-probe.ts). The real server runs in a child
// process on a loopback port; PostgreSQL runs in a schema of its own, dropped after.
// BENCH_RULES=n: a limit rule on each of the first n sensors of the fleet (its values cross the limit
// every few hours of data, so the rules raise and clear alarms as the batches go), and during every
// run a probe (bench/rule-probe.ts) times a rule's alarm from its reading's 201 to the active list.
// BENCH_RULES=n BENCH_RULES_TURNS=1 measures instead the cost of the rules within one run, on
// PostgreSQL with group commit: two schemas provisioned alike (the probe's sensor held out of the load
// on both), one with the n rules and the probe's, one without any rule; this checkout's server on
// each in turns (without, with; then with, without; and so on), the same batches and readings on both,
// BENCH_ROUNDS times (default 2) after an unreported warm-up round; the probe beside the runs with
// rules. The section "Ingest with n limit rules, in turns with none": each round's figures, batch
// records/s with rules / without (per round, ratio of the sums and of the medians), the readings' p99
// of each side, the probe's alarms pooled over the runs, and a verdict per target (with
// BENCH_READING_SITES=1 for the busy site's).
//   BENCH_RULES=500 BENCH_RULES_TURNS=1 BENCH_READING_SITES=1 BENCH_ROUNDS=4 npx tsx bench/ingest.ts
// BENCH_COMPARE_ROOT=<another checkout> runs instead, on PostgreSQL with group commit, that checkout's
// server, this one's, and this one's with BENCH_SUBSCRIBERS (default 100) stream subscribers, in turns,
// BENCH_ROUNDS times (default 2) after a warm-up round: the section "Ingest compared with <its commit>".
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { upsertClient } from '../src/auth/clients.js';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import {
  cpuSeconds,
  cpuSecondsOf,
  cpuSecondsSince,
  freePort,
  onEachDatabase,
  onPostgres,
  rollupCatchUp,
  startServer,
  reportSection,
} from './harness.js';
import {
  batchBody,
  copyChunks,
  MINUTES_PER_BATCH,
  readingBody,
  type Fleet,
} from './ingest-load.js';
import { startFsyncProbe, type FsyncProbe } from './fsync-probe.js';
import { report, type Run } from './ingest-report.js';
import { record } from './record.js';
import {
  describeProbe,
  PROBE_DEADBAND,
  PROBE_LIMIT,
  PROBE_TYPE,
  probeQuantile,
  runRuleProbe,
} from './rule-probe.js';
import { openSubscribers } from './stream-clients.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const SINGLE_CONNECTIONS = Number(process.env.BENCH_SINGLE_CONNECTIONS ?? 32);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 0);
/** Which loads to run: batch, single or both (for a quick look at one; the reports need both). */
const KINDS = (process.env.BENCH_KINDS ?? 'batch,single').split(',');
const SITES = 50;
/** Limit rules on the fleet's sensors (one each, the first n): the rule evaluator's cost. */
const RULES = Number(process.env.BENCH_RULES ?? 0);
/** With RULES: the sensor (and its site) whose rule the probe times, outside the load. */
let probe: { site: number; sensor: number } | undefined;
/** Sites the single readings go to (the first n): 1 is one busy site, whose rows every write touches. */
const READING_SITES = Number(process.env.BENCH_READING_SITES ?? SITES);
/** Whether wrk is installed (Debian: `apt-get install -y wrk`; it prints its version and exits 1). */
const HAS_WRK = (() => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return (err as { status?: number }).status === 1;
  }
})();
/**
 * The load generator of the single readings: wrk (C, one thread: a few microseconds a request) where
 * it is installed, else autocannon (JavaScript, in this process: on two cores shared with the server
 * and the database it reached 5,500-6,800 requests/s, short of the 10,000 the target asks for).
 * BENCH_SINGLE_LOAD=autocannon|wrk chooses.
 */
const SINGLE_LOAD = process.env.BENCH_SINGLE_LOAD ?? (HAS_WRK ? 'wrk' : 'autocannon');
/**
 * The load generator of the batches: wrk where it is installed, sending bodies made before the run
 * and read from a file; else autocannon (in this process, 0.19-0.22 of a core for 119-220 batches
 * a second: a tenth of the two cores the server and the database share with it).
 * BENCH_BATCH_LOAD=autocannon|wrk chooses.
 */
const BATCH_LOAD = process.env.BENCH_BATCH_LOAD ?? (HAS_WRK ? 'wrk' : 'autocannon');
/**
 * Batches a run of `seconds` may send: up to 800 a second (a run on a fast machine reached the
 * earlier 400, and the bench then stops rather than repeat keys).
 */
const batchesFor = (seconds: number) => seconds * 800;
/** Batches prepared per server run: its 2-s warm-up and its measured run. */
const BATCH_PREPARED = batchesFor(2) + batchesFor(DURATION);
const SECRET = 'bench-secret-123456';
/**
 * BENCH_FSYNC_PROBE=<a directory on the database's disk>: the disk's fdatasync times beside every
 * run (bench/fsync-probe.ts), reported with it: whether a latency tail is the disk's.
 */
let fsyncProbe: FsyncProbe | undefined;

/** Share of CPU time idle over the next `ms` (Linux /proc/stat; undefined elsewhere): how quiet the machine is. */
async function cpuIdle(ms: number): Promise<number | undefined> {
  const sample = () => {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const n = fields.map(Number);
    return { idle: n[3] + (n[4] ?? 0), total: n.reduce((a, b) => a + b, 0) };
  };
  try {
    const a = sample();
    await new Promise((r) => setTimeout(r, ms));
    const b = sample();
    return (b.idle - a.idle) / (b.total - a.total);
  } catch {
    return undefined;
  }
}

/**
 * Equipment of 50 sites (13 sensors each) and a client that reaches them all, for `serverRuns` runs
 * of a server (each sends at most BATCH_PREPARED batches), with a limit rule on each of the first
 * `rules` sensors (default BENCH_RULES). With BENCH_RULES the probe's sensor is held out of the fleet
 * whatever `rules` is (so a database provisioned without rules gets the very same load), and has its
 * rule where `rules` is not 0.
 */
async function provision(db: Database, serverRuns: number, rules = RULES): Promise<Fleet> {
  await migrate(db);
  const doc = generateDemo({ sites: SITES, transactionsPerSite: 0, imagesPerSite: 0 });
  await importDocument(db, doc);
  await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
  if (rules > 0)
    await importDocument(db, {
      // Values are (id % 97) * 10 + 50 sin(minute / 60): each crosses its limit twice an hour-cycle.
      alarmRules: doc.sensors!.slice(0, rules).map((s, i) => ({
        AlarmRuleID: i + 1,
        SiteSensorID: s.SiteSensorID,
        Condition: 'above',
        Limit: (s.SiteSensorID % 97) * 10 + 25,
        Deadband: 10,
        DelaySeconds: 300,
        AlarmType: 'BENCH_HIGH',
      })),
    });
  const bySite = new Map<number, number[]>();
  for (const s of doc.sensors!)
    bySite.set(s.SiteID, [...(bySite.get(s.SiteID) ?? []), s.SiteSensorID]);
  if (RULES > 0) {
    // The probe's sensor: the last of the last site, taken out of the fleet (no batch or reading of
    // the load touches it), with a rule of its own that raises at once.
    const last = doc.sensors![doc.sensors!.length - 1];
    bySite.get(last.SiteID)!.pop();
    probe = { site: last.SiteID, sensor: last.SiteSensorID };
    if (rules > 0)
      await importDocument(db, {
        alarmRules: [
          {
            AlarmRuleID: rules + 1,
            SiteSensorID: last.SiteSensorID,
            Condition: 'above',
            Limit: PROBE_LIMIT,
            Deadband: PROBE_DEADBAND,
            DelaySeconds: 0,
            AlarmType: PROBE_TYPE,
          },
        ],
      });
  }
  // Back in time, as a gateway's catch-up would be: every batch moves its site's window 100 minutes
  // on, so the days back are those that every batch the runs may send covers (at least 55), and the
  // last batch still ends before now, well within the 24 h ahead past which the service refuses a
  // timestamp.
  const windows = Math.ceil((serverRuns * BATCH_PREPARED) / bySite.size);
  const days = Math.max(55, Math.ceil((windows * MINUTES_PER_BATCH) / 1440) + 1);
  return {
    sitesSensors: [...bySite.values()],
    base: Math.floor((Date.now() - days * 86_400_000) / 60_000) * 60_000,
  };
}

async function tokenFor(base: string): Promise<string> {
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
  });
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** autocannon with a fresh body per request from make(counter); returns the run and how many requests were sent. */
async function load(
  url: string,
  token: string,
  connections: number,
  duration: number,
  make: (c: number) => string,
  start: number,
) {
  let c = start;
  const r = await autocannon({
    url,
    connections,
    duration,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: make(c++) }) }],
  });
  return { r, next: c };
}

/** The fields of an autocannon result this bench reads. */
interface LoadResult {
  '2xx': number;
  duration: number;
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
  timeouts: number;
}

/** wrk's "12.34ms", "850.00us" or "1.20s" in milliseconds. */
const wrkMs = (x: string) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(x.trim());
  if (!m) throw new Error(`wrk: unreadable latency ${x}`);
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'];
};

/** The headers and method of every request wrk sends (a Lua preamble). */
const wrkPreamble = (token: string) => `wrk.method = "POST"
wrk.headers["authorization"] = "Bearer ${token}"
wrk.headers["content-type"] = "application/json"
`;

/**
 * The single readings with wrk: the bodies of readingBody, made by a Lua script from the counter on (a
 * request's timestamp is the current second with the counter as milliseconds).
 */
function readingsLua(fleet: Fleet, token: string, start: number): string {
  const sites = fleet.sitesSensors.slice(0, READING_SITES);
  return `local sites = {${sites.map((ids) => `{${ids.join(',')}}`).join(',')}}
local c = ${start}
${wrkPreamble(token)}request = function()
  local site = sites[(c % #sites) + 1]
  local sensor = site[(math.floor(c / #sites) % #site) + 1]
  local body = string.format('{"sensorID":%d,"value":%.1f,"timestamp":"%s.%03dZ"}', sensor, (c % 1000) / 10, os.date("!%Y-%m-%dT%H:%M:%S"), c % 1000)
  c = c + 1
  return wrk.format(nil, nil, nil, body)
end
`;
}

/** Batch requests made before a run, whole (headers and body), one after another in a file. */
interface BatchFile {
  path: string;
  /** The batch number of the first request. */
  first: number;
  /** Byte offset of each request in the file, and of the last one's end. */
  offsets: number[];
}

/**
 * The batches with wrk: the requests of a BatchFile from batch number `start` on, as many as a run of
 * `seconds` may send, read into memory when wrk's thread starts, before the run (wrk then only
 * sends). Running past them stops the run (the bench then fails: every batch must be new).
 */
function batchesLua(file: BatchFile, start: number, seconds: number): string {
  const from = start - file.first;
  const to = Math.min(file.offsets.length - 1, from + batchesFor(seconds));
  const ends = file.offsets.slice(from + 1, to + 1).map((o) => o - file.offsets[from]);
  return `local ends = {${ends.join(',')}}
local data
local i = 0
init = function()
  local f = assert(io.open("${file.path}", "rb"))
  f:seek("set", ${file.offsets[from]})
  data = f:read(${file.offsets[to] - file.offsets[from]})
  f:close()
end
request = function()
  if i >= #ends then
    if i == #ends then io.stderr:write("wrk ran out\\n") end
    i = #ends + 1
    wrk.thread:stop()
    return string.sub(data, 1, ends[1])
  end
  local r = string.sub(data, (i == 0 and 0 or ends[i]) + 1, ends[i + 1])
  i = i + 1
  return r
end
`;
}

/**
 * Lua appended to every wrk script: wrk's own CPU time (os.clock) once its thread is ready and at
 * the end, on stderr: the bench starts its CPU counts when wrk is ready, and counts wrk's from then.
 */
const WRK_CPU_LUA = `
local initScript = init
init = function(args)
  if initScript then initScript(args) end
  io.stderr:write(string.format("wrk cpu ready %.3f\\n", os.clock()))
end
done = function()
  io.stderr:write(string.format("wrk cpu done %.3f\\n", os.clock()))
end
`;

/**
 * A load with wrk (one thread, `connections` connections, closed loop like autocannon) whose requests
 * the Lua `script` makes from the counter `start` on; `ready` is called once wrk has read what it
 * sends and begins. Returns the result in autocannon's terms, and wrk's CPU seconds over the run.
 */
async function loadWrk(
  url: string,
  connections: number,
  duration: number,
  script: string,
  start: number,
  ready?: () => void,
): Promise<{ r: LoadResult; next: number; cpu: number; ranOut: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const file = join(dir, 'load.lua');
  writeFileSync(file, script + WRK_CPU_LUA);
  try {
    const child = spawn(
      'wrk',
      ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', file, url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const before = stderr;
      stderr += d.toString();
      if (!before.includes('wrk cpu ready') && stderr.includes('wrk cpu ready')) ready?.();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${stderr.slice(-500)}`);
    const num = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? 0);
    const requests = num(/(\d+) requests in/);
    const seconds = num(/requests in ([\d.]+)s/);
    const non2xx = num(/Non-2xx or 3xx responses: (\d+)/);
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
      stdout,
    );
    const pct = (p: string) => wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(stdout)![1]);
    return {
      r: {
        '2xx': requests - non2xx,
        duration: seconds,
        latency: { p50: pct('50'), p99: pct('99') },
        errors: sock ? Number(sock[1]) + Number(sock[2]) + Number(sock[3]) : 0,
        non2xx,
        timeouts: sock ? Number(sock[4]) : 0,
      },
      // Each request took the next counter; a request cut at the end may have taken one too.
      next: start + requests + connections,
      ranOut: stderr.includes('wrk ran out'),
      // wrk's CPU seconds from its thread being ready to the end.
      cpu:
        Number(/wrk cpu done ([\d.]+)/.exec(stderr)?.[1] ?? NaN) -
        Number(/wrk cpu ready ([\d.]+)/.exec(stderr)?.[1] ?? NaN),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  label: string,
  backend: Run['backend'],
  group: boolean,
  base: string,
  fleet: Fleet,
  counter: { batch: number; single: number },
  streams = SUBSCRIBERS,
  /** Runs between the batch run and the readings run: waits for the refresher's backlog (rollupCatchUp). */
  afterBatch?: () => Promise<void>,
  /** The server's process, whose CPU time each run reports (with PostgreSQL's, on that database). */
  serverPid?: number,
  /** Whether the rule probe runs beside each run (with BENCH_RULES; not on a database without rules). */
  ruleProbe = true,
): Promise<Run[]> {
  const token = await tokenFor(base);
  const runs: Run[] = [];
  const subscribers = streams ? await openSubscribers(base, token, '1', streams) : undefined;
  // Batch bodies are made before the run (55 kB each), so the load generator spends its share of the
  // two cores sending rather than building JSON: for wrk into a file (it reads them before it starts),
  // for autocannon in memory (past the prepared ones, bodies are made on the fly).
  const prepared = new Map<number, string>();
  let batchFile: BatchFile | undefined;
  if (KINDS.includes('batch') && BATCH_LOAD === 'wrk') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-batches-'));
    batchFile = { path: join(dir, 'requests.http'), first: counter.batch, offsets: [0] };
    const { host, pathname } = new URL(`${base}/v1/edge/logs/sensor/batch`);
    const fd = openSync(batchFile.path, 'w');
    for (let c = counter.batch; c < counter.batch + BATCH_PREPARED; c++) {
      const body = Buffer.from(batchBody(fleet, c));
      const head = Buffer.from(
        `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      writeSync(fd, head);
      writeSync(fd, body);
      batchFile.offsets.push(
        batchFile.offsets[batchFile.offsets.length - 1] + head.length + body.length,
      );
    }
    closeSync(fd);
  } else if (KINDS.includes('batch'))
    for (let c = counter.batch; c < counter.batch + BATCH_PREPARED; c++)
      prepared.set(c, batchBody(fleet, c));
  const batch = (c: number) => {
    const body = prepared.get(c) ?? batchBody(fleet, c);
    prepared.delete(c);
    return body;
  };
  // A short warm-up, then the measured run. Counters go on, so every batch is new.
  for (const [kind, connections, path, make, per] of (
    [
      ['batch', BATCH_CONNECTIONS, '/v1/edge/logs/sensor/batch', batch, 1000],
      [
        'single',
        SINGLE_CONNECTIONS,
        '/v1/edge/readings/sensor',
        (c: number) => readingBody(fleet, c, READING_SITES),
        1,
      ],
    ] as const
  ).filter(([kind]) => KINDS.includes(kind))) {
    const key = kind as 'batch' | 'single';
    // The readings are measured on their own: not while the refresher rolls up the quarters the
    // batch run just wrote (a backlog of some 100,000 quarters, 10 s and more of both cores).
    if (key === 'single' && KINDS.includes('batch')) await afterBatch?.();
    const loader = key === 'single' ? SINGLE_LOAD : BATCH_LOAD;
    const run1 = async (
      duration: number,
      from: number,
      ready?: () => void,
    ): Promise<{ r: LoadResult; next: number; cpu?: number }> => {
      if (loader !== 'wrk') {
        ready?.();
        return load(base + path, token, connections, duration, make, from);
      }
      const script =
        key === 'single' ? readingsLua(fleet, token, from) : batchesLua(batchFile!, from, duration);
      const done = await loadWrk(base + path, connections, duration, script, from, ready);
      if (done.ranOut)
        throw new Error(
          `wrk sent every batch made for a ${duration}-s run (${batchesFor(duration)}); raise batchesFor`,
        );
      return done;
    };
    counter[key] = (await run1(2, counter[key])).next;
    const load0 = loadavg()[0];
    // CPU seconds of the server, of PostgreSQL's processes and of this process over the run (from
    // when the load begins: wrk first reads what it sends), as shares of one core.
    let cpu0 = NaN;
    let db0: ReturnType<typeof cpuSecondsOf> | undefined;
    let self0: NodeJS.CpuUsage | undefined;
    let began = Date.now();
    let probing = true;
    const probed =
      probe && ruleProbe
        ? runRuleProbe({ base, token, ...probe }, () => !probing)
        : Promise.resolve(undefined);
    const {
      r,
      next,
      cpu: wrkCpu,
    } = await run1(DURATION, counter[key], () => {
      cpu0 = serverPid ? cpuSeconds(serverPid) : NaN;
      db0 = cpuSecondsOf('postgres');
      self0 = process.cpuUsage();
      began = Date.now();
    }).finally(() => (probing = false));
    const probeResult = await probed;
    const flush = fsyncProbe?.between(began, Date.now());
    const selfCpu = process.cpuUsage(self0);
    // The load generator: this process (autocannon), and wrk over its run.
    const loadCpu = (selfCpu.user + selfCpu.system) / 1e6 + (wrkCpu ?? 0);
    const seconds = r.duration;
    const serverCpu = serverPid ? (cpuSeconds(serverPid) - cpu0) / seconds : undefined;
    const databaseCpu =
      backend === 'postgres' ? cpuSecondsSince('postgres', db0!) / seconds : undefined;
    counter[key] = next;
    const ok = r['2xx'];
    const run: Run = {
      label: `${label}: ${kind === 'batch' ? `batch sensor logs, 1,000 a request (load: ${BATCH_LOAD})` : `single sensor readings (load: ${SINGLE_LOAD})`}`,
      kind: key,
      backend,
      group,
      connections,
      requests: ok,
      rps: Math.round(ok / r.duration),
      records: Math.round((ok * per) / r.duration),
      p50: r.latency.p50,
      p99: r.latency.p99,
      errors: r.errors + r.non2xx + r.timeouts,
      load: Math.max(load0, loadavg()[0]),
      serverCpu,
      databaseCpu,
      flush,
    };
    runs.push(run);
    if (subscribers)
      console.log(
        `  ${streams} subscribers of site 1 got ${subscribers.readings.reduce((a, b) => a + b, 0)} readings and ${subscribers.others.reduce((a, b) => a + b, 0)} other events so far, ${subscribers.ended} streams ended`,
      );
    console.log(
      `${run.label} [${backend}, group commit ${group ? 'on' : 'off'}, c=${connections}]: ${run.rps} req/s, ${run.records} records/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${run.errors} errors; load generator ${(loadCpu / seconds).toFixed(2)} cores${flush ? `; fdatasync p99 ${flush.p99.toFixed(1)} ms, max ${flush.max.toFixed(1)} ms` : ''}`,
    );
    if (probeResult) {
      run.probe = probeResult;
      run.ruleAlarms = describeProbe(probeResult);
      console.log(`  rule alarm in the active list after its reading's 201: ${run.ruleAlarms}`);
    }
  }
  subscribers?.close();
  if (batchFile) rmSync(dirname(batchFile.path), { recursive: true, force: true });
  return runs;
}

/** (b): the rows of the first n batches, COPY'd into an emptied sensor_logs by one plain client. */
async function rawCopy(url: string, fleet: Fleet, batches: number): Promise<Run> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('TRUNCATE sensor_logs');
    const chunks = [...copyChunks(fleet, batches)];
    const started = performance.now();
    await pipeline(
      Readable.from(chunks),
      client.query(copyFrom('COPY sensor_logs (sensor_id, ts, value) FROM STDIN')),
    );
    const seconds = (performance.now() - started) / 1000;
    const rows = batches * 1000;
    const run: Run = {
      label: '(b) raw COPY of the same rows, one client',
      kind: 'copy',
      backend: 'postgres',
      group: false,
      connections: 1,
      requests: 1,
      rps: 0,
      records: Math.round(rows / seconds),
      p50: 0,
      p99: 0,
      errors: 0,
      load: loadavg()[0],
    };
    console.log(`${run.label}: ${rows} rows in ${seconds.toFixed(2)} s = ${run.records} rows/s`);
    return run;
  } finally {
    await client.end();
  }
}

/** A server that runs in turns with others (serversInTurns). */
interface Turn {
  name: string;
  /** Another checkout whose server runs (default: this one's). */
  root?: string;
  /** Live stream subscribers of site 1 during its runs. */
  streams: number;
  /** The database its server runs on. */
  env: { DATABASE_URL?: string };
  /** Its batch and reading counters (servers on one database share them, so every batch is new). */
  counter: { batch: number; single: number };
  /** Whether the rule probe runs beside its runs (with BENCH_RULES). */
  ruleProbe: boolean;
}

/** A measured run of serversInTurns: which server, which round (from 1). */
interface TurnRun {
  config: string;
  round: number;
  run: Run;
}

/**
 * Each server in turn on PostgreSQL with group commit, its batch run then its readings run (measure),
 * `rounds` times after a warm-up round. Round 0 warms the new databases up (their first minutes of
 * inserts were measured far slower for every server alike) and is not reported. With `alternate` the
 * order turns round every other round (A B, B A, A B…), so that a machine that speeds up or slows
 * down weighs on both alike.
 */
async function serversInTurns(
  turns: Turn[],
  fleet: Fleet,
  rounds: number,
  alternate = false,
): Promise<TurnRun[]> {
  const runs: TurnRun[] = [];
  for (let round = 0; round <= rounds; round++) {
    for (const turn of alternate && round % 2 === 1 ? [...turns].reverse() : turns) {
      const port = await freePort();
      const stop = await startServer(
        port,
        { ...turn.env, RATE_LIMIT_MAX: '1000000000', ARCHIVE_AFTER_DAYS: '0' },
        turn.root,
      );
      try {
        const measured = await measure(
          turn.name,
          'postgres',
          true,
          `http://127.0.0.1:${port}`,
          fleet,
          turn.counter,
          turn.streams,
          async () => void (await rollupCatchUp(turn.env.DATABASE_URL!)),
          stop.pid,
          turn.ruleProbe,
        );
        if (round > 0) for (const run of measured) runs.push({ config: turn.name, round, run });
      } finally {
        await stop();
      }
    }
  }
  return runs;
}

/** The table of serversInTurns' runs, a row per server and round; a kind left out (BENCH_KINDS) shows as –. */
function roundsTable(configs: string[], rounds: number, runs: TurnRun[]): string[] {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    '| server | round | batch records/s | batch p99 ms | batch: server, database cores | readings/s | readings p50 ms | readings p99 ms | errors |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const cores = (r: Run | undefined) =>
    r?.serverCpu === undefined || r.databaseCpu === undefined
      ? '–'
      : `${r.serverCpu.toFixed(2)}, ${r.databaseCpu.toFixed(2)}`;
  for (const config of configs)
    for (let round = 1; round <= rounds; round++) {
      const b = turnRun(runs, config, 'batch', round);
      const s = turnRun(runs, config, 'single', round);
      lines.push(
        `| ${config} | ${round} | ${b ? n(b.records) : '–'} | ${b?.p99 ?? '–'} | ${cores(b)} | ${s ? n(s.rps) : '–'} | ${s?.p50 ?? '–'} | ${s?.p99 ?? '–'} | ${(b?.errors ?? 0) + (s?.errors ?? 0)} |`,
      );
    }
  return lines;
}

const turnRun = (runs: TurnRun[], config: string, kind: Run['kind'], round: number) =>
  runs.find((r) => r.config === config && r.round === round && r.run.kind === kind)?.run;

/** f of a server's runs of one kind, in round order. */
const turnValues = (runs: TurnRun[], config: string, kind: Run['kind'], f: (r: Run) => number) =>
  runs.filter((r) => r.config === config && r.run.kind === kind).map((r) => f(r.run));

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The median of xs (the mean of the middle two for an even count); NaN when empty. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The same load on another checkout's server and on this one's, with and without subscribers, in turns. */
async function compare(otherRoot: string) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const streams = SUBSCRIBERS || 100;
  const commit = execFileSync('git', ['-C', otherRoot, 'log', '-1', '--format=%h %s'], {
    encoding: 'utf8',
  }).trim();
  const idle = await cpuIdle(3000);
  const before = loadavg()[0];
  const configs = [
    { name: `before (${commit.split(' ')[0]})`, root: otherRoot, streams: 0 },
    { name: 'now', root: undefined, streams: 0 },
    { name: `now, ${streams} subscribers of site 1`, root: undefined, streams },
  ];
  const runs: TurnRun[] = [];
  await onEachDatabase(DB_URL, 'ingestcmp', async (backend, db, env) => {
    if (backend !== 'postgres') return void (await db.close());
    const fleet = await provision(db, (rounds + 1) * configs.length);
    await db.close();
    const counter = { batch: 0, single: 0 };
    const turns = configs.map((c) => ({ ...c, env, counter, ruleProbe: true }));
    runs.push(...(await serversInTurns(turns, fleet, rounds)));
  });
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, PostgreSQL on the same machine, group commit on.`,
    `Command: \`BENCH_COMPARE_ROOT=<checkout of ${commit.split(' ')[0]}> npx tsx bench/ingest.ts\`: the servers of both checkouts on one database, in turns, ${rounds} rounds after an unreported warm-up round; ${DURATION} s a run after a 2 s warm-up; ${BATCH_CONNECTIONS} connections for batches, ${SINGLE_CONNECTIONS} for readings.`,
    `Before: ${commit}. CPU idle in the 3 s before the run: ${idle === undefined ? '?' : Math.round(idle * 100)} %; load average before ${before.toFixed(2)}, highest seen ${Math.max(...runs.map((r) => r.run.load)).toFixed(2)}.`,
    '',
    ...roundsTable(
      configs.map((c) => c.name),
      rounds,
      runs,
    ),
  ];
  const mean = (config: string, kind: Run['kind'], f: (r: Run) => number) => {
    const xs = turnValues(runs, config, kind, f);
    return sum(xs) / xs.length;
  };
  lines.push(
    '',
    '| server (mean of the rounds) | batch records/s | vs before | readings/s | vs before | readings p99 ms |',
    '|---|---|---|---|---|---|',
  );
  const base = {
    batch: mean(configs[0].name, 'batch', (r) => r.records),
    single: mean(configs[0].name, 'single', (r) => r.rps),
  };
  for (const config of configs) {
    const batch = mean(config.name, 'batch', (r) => r.records);
    const single = mean(config.name, 'single', (r) => r.rps);
    const pct = (x: number, y: number) =>
      Number.isFinite(x) ? `${x >= y ? '+' : ''}${(((x - y) / y) * 100).toFixed(1)} %` : '–';
    const num = (x: number) => (Number.isFinite(x) ? n(x) : '–');
    const p99 = mean(config.name, 'single', (r) => r.p99);
    lines.push(
      `| ${config.name} | ${num(batch)} | ${pct(batch, base.batch)} | ${num(single)} | ${pct(single, base.single)} | ${Number.isFinite(p99) ? p99.toFixed(1) : '–'} |`,
    );
  }
  reportSection('Ingest', lines.join('\n'), 'Ingest compared with another checkout');
}

/**
 * BENCH_RULES with BENCH_RULES_TURNS=1: the same server on two schemas loaded alike, one with the
 * rules and one without, in turns (rulesInTurns' report: the three targets of ingest with rules).
 */
async function rulesInTurns() {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const idle = await cpuIdle(3000);
  const before = loadavg()[0];
  const without = 'without rules';
  const withRules = `with ${RULES} rules`;
  const runs: TurnRun[] = [];
  await onPostgres(DB_URL, 'ingestrules', async (ruled, ruledEnv) => {
    const fleet = await provision(ruled, rounds + 1);
    await ruled.close();
    await onPostgres(DB_URL, 'ingestnorules', async (bare, bareEnv) => {
      const same = await provision(bare, rounds + 1, 0);
      await bare.close();
      if (JSON.stringify(same.sitesSensors) !== JSON.stringify(fleet.sitesSensors))
        throw new Error('the two schemas got different equipment');
      // Each side its own counters from 0: both get the very same batches and readings.
      const turn = (name: string, env: { DATABASE_URL: string }, ruleProbe: boolean): Turn => ({
        name,
        env,
        streams: SUBSCRIBERS,
        counter: { batch: 0, single: 0 },
        ruleProbe,
      });
      runs.push(
        ...(await serversInTurns(
          [turn(without, bareEnv, false), turn(withRules, ruledEnv, true)],
          fleet,
          rounds,
          true,
        )),
      );
    });
  });
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, PostgreSQL on the same machine, group commit on.`,
    `Command: \`BENCH_RULES=${RULES} BENCH_RULES_TURNS=1 BENCH_ROUNDS=${rounds}${READING_SITES === 1 ? ' BENCH_READING_SITES=1' : ''} npx tsx bench/ingest.ts\`: this checkout's server on two schemas provisioned alike (50 demo sites, 13 sensors each, the probe's sensor held out of the load on both), one with a limit rule (above, deadband 10, delay 300 s) on each of ${RULES} sensors and the probe's rule, one without any rule; each side gets the same batches and readings. In turns (without, with; then with, without; …), ${rounds} round${rounds === 1 ? '' : 's'} after an unreported warm-up round; ${DURATION} s a run after a 2 s warm-up; ${BATCH_CONNECTIONS} connections for batches, ${SINGLE_CONNECTIONS} for readings${READING_SITES === 1 ? ' (all at one busy site)' : ` (over ${READING_SITES} sites)`}. The rule probe (bench/rule-probe.ts: a reading, then the active list polled every 10 ms) runs beside every run of the side with rules only.`,
    `CPU idle in the 3 s before the run: ${idle === undefined ? '?' : Math.round(idle * 100)} %; load average before ${before.toFixed(2)}, highest seen ${Math.max(before, ...runs.map((r) => r.run.load)).toFixed(2)}.`,
    '',
    ...roundsTable([without, withRules], rounds, runs),
    '',
    '"batch: server, database cores": the CPU time of the server process and of all PostgreSQL processes over each batch run, in cores (the machine has ' +
      `${cpus().length}).`,
    '',
  ];
  const batch = (config: string) => turnValues(runs, config, 'batch', (r) => r.records);
  const [bareBatch, ruledBatch] = [batch(without), batch(withRules)];
  const perRound = ruledBatch.map((x, i) => x / bareBatch[i]);
  const bySums = sum(ruledBatch) / sum(bareBatch);
  const byMedians = median(ruledBatch) / median(bareBatch);
  const p99s = (config: string) => turnValues(runs, config, 'single', (r) => r.p99);
  const rps = (config: string) => turnValues(runs, config, 'single', (r) => r.rps);
  const probes = runs.filter((r) => r.config === withRules && r.run.probe).map((r) => r.run.probe!);
  const pooled = {
    latencies: probes.flatMap((p) => p.latencies),
    missed: sum(probes.map((p) => p.missed)),
  };
  const probeP99 = probeQuantile(pooled, 0.99);
  const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
  const worst = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
  if (bareBatch.length)
    lines.push(
      `- Batch records/s with rules / without, per round: ${perRound.map((r) => r.toFixed(3)).join(', ')}; ratio of the sums ${n(sum(ruledBatch))} / ${n(sum(bareBatch))} = ${bySums.toFixed(3)}; of the medians ${n(median(ruledBatch))} / ${n(median(bareBatch))} = ${byMedians.toFixed(3)}.`,
    );
  if (p99s(without).length)
    lines.push(
      `- Readings p99 ms per round, without rules: ${p99s(without).join(', ')} (${rps(without).map(n).join(', ')} req/s); with rules: ${p99s(withRules).join(', ')} (${rps(withRules).map(n).join(', ')} req/s).`,
    );
  for (const r of runs.filter((r) => r.run.ruleAlarms))
    lines.push(
      `- Rule probe, round ${r.round}, ${r.run.kind === 'batch' ? 'during batches' : 'during readings'}: ${r.run.ruleAlarms}.`,
    );
  lines.push('', 'Targets (2-core machine):');
  if (bareBatch.length)
    lines.push(
      `- Batch ingest with ${RULES} rules ≥ 0.9 × without (ratio of the sums over the rounds): ${bySums.toFixed(3)}, ${verdict(bySums >= 0.9)}.`,
    );
  if (p99s(withRules).length)
    lines.push(
      `- Readings at one busy site with ${RULES} rules, p99 ≤ 30 ms (the worst round): ${READING_SITES === 1 ? `${worst(p99s(withRules))} ms (without rules ${worst(p99s(without))} ms), ${verdict(worst(p99s(withRules)) <= 30)}` : `not this run (readings spread over ${READING_SITES} sites; BENCH_READING_SITES=1)`}.`,
    );
  lines.push(
    `- A rule's alarm in the active list ≤ 2 s (p99) after its reading's 201, none missed (every run with rules pooled): ${describeProbe(pooled)}, ${verdict(probeP99 !== undefined && probeP99 <= 2000 && pooled.missed === 0)}.`,
  );
  reportSection('Ingest', lines.join('\n'), `Ingest with ${RULES} limit rules, in turns with none`);
}

async function main() {
  const comparing = process.env.BENCH_COMPARE_ROOT;
  const ruleTurns = RULES > 0 && process.env.BENCH_RULES_TURNS === '1';
  if (comparing && ruleTurns) throw new Error('BENCH_COMPARE_ROOT or BENCH_RULES_TURNS, not both');
  await record(comparing ? 'ingest-compare' : ruleTurns ? 'ingest-rules' : 'ingest', {
    postgres: DB_URL,
    pglite: !comparing && !ruleTurns && process.env.BENCH_SKIP_PGLITE !== '1',
  });
  if (process.env.BENCH_FSYNC_PROBE) fsyncProbe = startFsyncProbe(process.env.BENCH_FSYNC_PROBE);
  try {
    if (comparing) return await compare(comparing);
    if (ruleTurns) return await rulesInTurns();
    await ingest();
  } finally {
    fsyncProbe?.stop();
  }
}

async function ingest() {
  const runs: Run[] = [];
  const catchUp: string[] = [];
  const before = loadavg()[0];
  const idle = await cpuIdle(3000);
  // On each database (a) and (c) with and without group commit; on PostgreSQL then (b) with the rows (a) stored.
  await onEachDatabase(DB_URL, 'ingest', async (backend, db, env) => {
    const fleet = await provision(db, 2);
    await db.close();
    const counter = { batch: 0, single: 0 };
    for (const group of [true, false]) {
      const port = await freePort();
      const stop = await startServer(port, {
        ...env,
        RATE_LIMIT_MAX: '1000000000',
        GROUP_COMMIT: group ? '1' : '0',
        // The batches lie 55 days back: the archive pass (a minute after start) would move the days
        // being written. Uploads of such old logs still take the archive's locks and path.
        ARCHIVE_AFTER_DAYS: '0',
      });
      const label = backend === 'postgres' ? '(a)/(c)' : '(d)';
      try {
        const name = group ? label : `${label} without group commit`;
        runs.push(
          ...(await measure(
            name,
            backend,
            group,
            `http://127.0.0.1:${port}`,
            fleet,
            counter,
            SUBSCRIBERS,
            backend === 'postgres'
              ? async () => void catchUp.push(`${name}: ${await rollupCatchUp(env.DATABASE_URL!)}`)
              : undefined,
            stop.pid,
          )),
        );
      } finally {
        await stop();
      }
    }
    if (backend === 'postgres') runs.push(await rawCopy(env.DATABASE_URL!, fleet, counter.batch));
  });
  const cpu = `${cpus().length} cores (${cpus()[0]?.model.trim()})`;
  const streams = SUBSCRIBERS
    ? `\n\nDuring every run ${SUBSCRIBERS} live stream subscribers of site 1 (one of the 50) were connected (raw HTTP, in the load generator's process), so the server also sent each event of site 1 ${SUBSCRIBERS} times.`
    : '';
  const rules = RULES
    ? `\n\nA limit rule (above, deadband 10, delay 300 s) on each of ${RULES} sensors of the fleet was evaluated on every stored log and reading.`
    : '';
  const text =
    report(runs, { cpu, before, idle, duration: DURATION, readingSites: READING_SITES }) +
    (catchUp.length
      ? `\n- Rollups after each batch run (the readings run began once they were done): ${catchUp.join('; ')}.`
      : '') +
    streams +
    rules;
  reportSection(
    SUBSCRIBERS ? 'Live stream' : 'Ingest',
    text,
    SUBSCRIBERS
      ? `Ingest with ${SUBSCRIBERS} stream subscribers`
      : RULES
        ? `Ingest with ${RULES} alarm rules`
        : 'Ingest',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
