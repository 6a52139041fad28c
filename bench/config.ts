// Configuration read benchmark (issue 3): one large site on PostgreSQL, the real server in a child
// process on a loopback port, autocannon against /v1/config/site/compact and /v1/config/site.
//   npx tsx bench/config.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DURATION seconds
// per run (default 10), BENCH_CONNECTIONS (default "1,4,10"). Uses a schema of its own, dropped after.
// BENCH_BEFORE: an earlier run's result file (e.g. of another checkout, just before this one); its
// Configuration report's figures are set beside these, with the change in req/s and p99.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import { upsertClient } from '../src/auth/clients.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { freePort, startServer, reportSection } from './harness.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,4,10').split(',').map(Number);
const SITE = {
  sensorsPerSite: 1000,
  pumpsPerSite: 50,
  metersPerSite: 50,
  tanksPerSite: 20,
  actuatorsPerSite: 20,
};
const MINIMUM = {
  sensors: 200,
  pumps: 50,
  flow_meters: 50,
  tank_groups: 20,
  actuators: 20,
  registers: 2000,
};
const SECRET = 'bench-secret-123456';

/** What is measured: the two whole-site paths, and /updates (never served from the body cache). */
const PATHS = [
  { path: '/v1/config/site/compact?siteId=1', label: 'compact' },
  { path: '/v1/config/site/compact?siteId=1', label: 'compact, gzip', gzip: true },
  { path: '/v1/config/site?siteId=1', label: 'full site' },
  { path: '/v1/config/site?siteId=1', label: 'full site, gzip', gzip: true },
  {
    path: '/v1/config/updates/site/compact?siteId=1&startDate=2100-01-01T00:00Z',
    label: 'updates compact, nothing changed (edge polling)',
  },
  {
    path: '/v1/config/updates/site/compact?siteId=1&startDate=2000-01-01T00:00Z',
    label: 'updates compact, everything changed (built and serialized every time)',
  },
];

interface Run {
  label: string;
  path: string;
  connections: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  bytes: number;
  errors: number;
}

async function main() {
  await record('config', { postgres: DB_URL });
  const schema = `bench_config_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(DB_URL, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const load = loadavg()[0];
  let stop = async () => {};
  try {
    const db = await openPostgres(DB_URL, { schema });
    await migrate(db);
    const t0 = Date.now();
    await importDocument(
      db,
      generateDemo({
        sites: 1,
        transactionsPerSite: 0,
        imagesPerSite: 0,
        now: new Date('2026-06-01T12:00:00Z'),
        ...SITE,
      }),
    );
    const counts: Record<string, number> = {};
    for (const table of Object.keys(MINIMUM))
      counts[table] = (
        await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = 1`)
      )[0].n;
    for (const [table, min] of Object.entries(MINIMUM))
      if (counts[table] < min)
        throw new Error(`site too small: ${counts[table]} ${table}, want at least ${min}`);
    console.log(`imported site 1 in ${Date.now() - t0} ms:`, counts);
    await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: [1] });
    await db.close();

    const port = await freePort();
    const url = new URL(DB_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    stop = await startServer(port, { DATABASE_URL: url.toString(), RATE_LIMIT_MAX: '100000000' });
    const base = `http://127.0.0.1:${port}`;
    const tokenRes = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
    });
    const { accessToken } = (await tokenRes.json()) as { accessToken: string };
    const auth = { authorization: `Bearer ${accessToken}` };

    const runs: Run[] = [];
    let cold = 0;
    for (const { path, label, gzip } of PATHS) {
      // Explicit either way: fetch would otherwise ask for gzip itself.
      const headers = { ...auth, 'accept-encoding': gzip ? 'gzip' : 'identity' };
      const started = performance.now();
      const probe = await fetch(base + path, { headers });
      await probe.arrayBuffer();
      if (!cold) cold = Math.round(performance.now() - started);
      const bytes = Number(probe.headers.get('content-length')); // on the wire
      if (probe.status !== 200) throw new Error(`${path}: ${probe.status}`);
      for (const connections of CONNECTIONS) {
        await autocannon({ url: base + path, headers, connections, duration: 2 }); // warm-up
        const r = await autocannon({ url: base + path, headers, connections, duration: DURATION });
        const run = {
          label,
          path,
          connections,
          requests: r.requests.total,
          rps: Math.round(r.requests.average),
          p50: r.latency.p50,
          p99: r.latency.p99,
          bytes,
          errors: r.errors + r.non2xx,
        };
        runs.push(run);
        console.log(
          `${label} c=${connections}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${run.requests} requests, ${run.errors} errors, ${bytes} bytes`,
        );
      }
    }
    const busy = Math.max(load, loadavg()[0]);
    console.log(`first request (cold: load, index, build, serialize): ${cold} ms`);
    const before = process.env.BENCH_BEFORE ? readBefore(process.env.BENCH_BEFORE) : undefined;
    reportSection(
      'Configuration',
      report(runs, counts, load, busy, cold) + (before ? comparison(runs, before) : ''),
    );
  } finally {
    await stop();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
}

function report(
  runs: Run[],
  counts: Record<string, number>,
  before: number,
  busy: number,
  cold: number,
): string {
  const rows = runs.map(
    (r) =>
      `| ${r.label}: \`${r.path.replace('/v1/config', '')}\` | ${r.connections} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.requests} | ${r.errors} | ${Math.round(r.bytes / 1024)} KiB |`,
  );
  const verdict = (label: string) => {
    const of = runs.filter((r) => r.label === label);
    const met = of.filter((r) => r.p99 < 50).map((r) => r.connections);
    const missed = of.filter((r) => r.p99 >= 50).map((r) => r.connections);
    return `${label}: ${!missed.length ? 'met at every concurrency measured' : `met at ${met.join(', ') || 'no'} connection(s), missed at ${missed.join(', ')}`}`;
  };
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, PostgreSQL on the same machine.`,
    `Command: \`npx tsx bench/config.ts\` (server in a child process, autocannon in this one; ${DURATION} s per run after a 2 s warm-up).`,
    `Site: ${counts.sensors} sensors, ${counts.flow_meters} flow meters, ${counts.pumps} pumps, ${counts.tank_groups} tank groups, ${counts.actuators} actuators, ${counts.registers} registers (generateDemo, one site).`,
    `Load average before the run ${before.toFixed(2)}, highest seen ${busy.toFixed(2)}${busy > 0.7 ? ': the machine was busy (another helper may have been running its own load), so the figures are conservative' : ''}.`,
    '',
    '| what: path | connections | req/s | p50 ms | p99 ms | requests | errors | body |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Target (p99 under 50 ms for the compact configuration): ${verdict('compact')}; ${verdict('compact, gzip')}.`,
    `The first request after start (cold: the fingerprint and thirteen queries in one read-only REPEATABLE READ snapshot, index, build, serialize the compact body) took ${cold} ms. Whole-site bodies are then served from a cache checked on every request against a one-query fingerprint of the site's configuration rows (at most one such query per site at a time, shared by the requests that arrived while the previous one ran); /updates paths are built from the cached rows every time. Without gzip the 1.5 MB bodies make loopback bandwidth and the load generator, on the same 2 cores, the limit at 10 connections.`,
  ].join('\n');
}

type Figures = Map<string, { rps: number; p99: number }>;
const keyOf = (label: string, connections: number) => `${label} c=${connections}`;

/** The rows of the Configuration table of an earlier run's report (its result file). */
function readBefore(file: string): { figures: Figures; cold?: number } {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf('## Configuration');
  if (start < 0) throw new Error(`${file}: no Configuration section`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const figures: Figures = new Map();
  for (const m of section.matchAll(/^\| (.+?): `[^`]*` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|/gm))
    figures.set(keyOf(m[1], Number(m[2])), { rps: Number(m[3]), p99: Number(m[5]) });
  const cold = /took (\d+) ms/.exec(section)?.[1];
  return { figures, cold: cold === undefined ? undefined : Number(cold) };
}

function comparison(runs: Run[], before: { figures: Figures; cold?: number }): string {
  const pct = (a: number, b: number) => `${b >= a ? '+' : ''}${Math.round(((b - a) / a) * 100)} %`;
  const rows = runs.flatMap((r) => {
    const b = before.figures.get(keyOf(r.label, r.connections));
    return b
      ? [
          `| ${r.label} | ${r.connections} | ${b.rps} → ${r.rps} (${pct(b.rps, r.rps)}) | ${b.p99} → ${r.p99} |`,
        ]
      : [];
  });
  const within = runs.filter((r) => {
    const b = before.figures.get(keyOf(r.label, r.connections));
    return b && r.rps >= b.rps * 0.9;
  }).length;
  return [
    '',
    `Before and after, measured one after the other (before: the previous code, from \`BENCH_BEFORE\`):`,
    '',
    '| what | connections | req/s before → after | p99 ms before → after |',
    '|---|---|---|---|',
    ...rows,
    '',
    `${within} of ${rows.length} runs within 10 % of the earlier throughput (or faster).${before.cold === undefined ? '' : ` First request: ${before.cold} ms before.`}`,
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
