// The "Ingest" report, where bench/RESULTS.md takes its figures from: the figures, the ratio of (a)
// to (b), and plainly which targets were met.
import type { ProbeResult } from './rule-probe.js';

export interface Run {
  label: string;
  kind: 'batch' | 'single' | 'copy';
  backend: 'postgres' | 'pglite';
  group: boolean;
  connections: number;
  /** 2xx responses in the measured run. */
  requests: number;
  rps: number;
  /** Records (rows) stored per second. */
  records: number;
  p50: number;
  p99: number;
  errors: number;
  /** Highest one-minute load average seen around the run. */
  load: number;
  /** CPU of the server's process over the run, in cores (1: one core all the time). */
  serverCpu?: number;
  /** CPU of PostgreSQL's processes over the run, in cores (PGlite runs in the server's). */
  databaseCpu?: number;
  /** The disk's fdatasync times over the run (BENCH_FSYNC_PROBE), in ms. */
  flush?: { n: number; p50: number; p99: number; max: number };
  /** With limit rules: how soon a rule's alarm was in the active list after its reading's 201 (bench/rule-probe.ts). */
  ruleAlarms?: string;
  /** The probe's times behind ruleAlarms (to pool several runs'). */
  probe?: ProbeResult;
}

const n = (x: number) => x.toLocaleString('en-US');
/** CPU in cores, from /proc over the run; – where not measured. */
const cores = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(2);
const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');

export function report(
  runs: Run[],
  env: { cpu: string; before: number; idle?: number; duration: number; readingSites: number },
): string {
  const find = (kind: Run['kind'], backend: Run['backend'], group: boolean) =>
    runs.find((r) => r.kind === kind && r.backend === backend && r.group === group);
  const a = find('batch', 'postgres', true);
  const copy = runs.find((r) => r.kind === 'copy');
  const c = find('single', 'postgres', true);
  const busiest = Math.max(env.before, ...runs.map((r) => r.load));
  const rows = runs.map(
    (r) =>
      `| ${r.label} | ${r.backend} | ${r.kind === 'copy' ? '–' : r.group ? 'on' : 'off'} | ${r.connections} | ${r.kind === 'copy' ? '–' : n(r.rps)} | ${n(r.records)} | ${r.kind === 'copy' ? '–' : r.p50} | ${r.kind === 'copy' ? '–' : r.p99} | ${r.errors} | ${cores(r.serverCpu)} | ${cores(r.databaseCpu)} |`,
  );
  const ratio = a && copy ? a.records / copy.records : 0;
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${env.cpu}, Node ${process.version}, PostgreSQL on the same machine (synchronous_commit on).`,
    `Command: \`npx tsx bench/ingest.ts\` (the real server in a child process, the load generator (wrk, or autocannon in this process where a run's label says so) on loopback; ${env.duration} s a run after a 2 s warm-up; every request carries new keys).`,
    `Equipment: 50 demo sites, 13 sensors each. A batch is one site's gateway sending 10 sensors x 100 minutes; a reading is one sensor's value stamped now.`,
    `${env.idle === undefined ? '' : `CPU idle in the 3 s before the run: ${Math.round(env.idle * 100)} %${env.idle < 0.8 ? ' (other sessions were using this machine, so the figures are conservative)' : ''}. `}` +
      `One-minute load average before the run ${env.before.toFixed(2)}, highest seen during it ${busiest.toFixed(2)} (it lags, and other sessions share this machine). ` +
      `Server, database and load generator share the ${env.cpu.split(' ')[0]} cores, so the figures move from run to run.`,
    '',
    '| run | database | group commit | connections | req/s | records/s | p50 ms | p99 ms | errors | server CPU (cores) | PostgreSQL CPU (cores) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Targets (2-core machine):',
  ];
  if (a)
    lines.push(
      `- (a) batch logs at least 100,000 records/s: ${n(a.records)}, ${verdict(a.records >= 100_000)}.`,
    );
  if (a && copy)
    lines.push(
      `- (a) at least 0.6 × (b), the rollup refresher on: (a)/(b) = ${n(a.records)} / ${n(copy.records)} = ${ratio.toFixed(3)}, ${verdict(ratio >= 0.6)}.`,
    );
  if (c)
    lines.push(
      `- (c) single readings at least 5,000 req/s with p99 under 20 ms: ${n(c.rps)} req/s, p99 ${c.p99} ms, ${verdict(c.rps >= 5000 && c.p99 < 20)}.`,
      `- (c) at one busy site (BENCH_READING_SITES=1), p99 at most 30 ms at 10,000 req/s: ${env.readingSites === 1 ? `${n(c.rps)} req/s, p99 ${c.p99} ms, ${verdict(c.rps >= 10_000 && c.p99 <= 30)}` : `not this run (readings spread over ${env.readingSites} sites)`}.`,
    );
  const d = runs.filter((r) => r.backend === 'pglite' && r.group);
  if (d.length)
    lines.push(
      `- (d) PGlite (no target of its own): ${d.map((r) => `${r.kind === 'batch' ? 'batches' : 'readings'} ${n(r.kind === 'batch' ? r.records : r.rps)} ${r.kind === 'batch' ? 'records/s' : `req/s, p99 ${r.p99} ms`}`).join('; ')}.`,
    );
  const off = find('single', 'postgres', false);
  if (c && off)
    lines.push(
      `- Group commit for single readings on PostgreSQL: ${n(off.rps)} req/s (p99 ${off.p99} ms) without, ${n(c.rps)} req/s (p99 ${c.p99} ms) with.`,
    );
  const ruled = runs.filter((r) => r.ruleAlarms);
  if (ruled.length)
    lines.push(
      `- A limit rule's alarm in the active list after its reading's 201 (target p99 ≤ 2 s), during each run: ${ruled.map((r) => `${r.label} [${r.backend}${r.group ? '' : ', group commit off'}]: ${r.ruleAlarms}`).join('; ')}.`,
    );
  const probed = runs.filter((r) => r.flush);
  if (probed.length)
    lines.push(
      `- The disk's fdatasync of 8 kB (BENCH_FSYNC_PROBE, every 10 ms beside the run; every commit waits for one): ${probed.map((r) => `${r.label}: ${r.flush!.n} calls, p50 ${r.flush!.p50.toFixed(1)} ms, p99 ${r.flush!.p99.toFixed(1)} ms, max ${r.flush!.max.toFixed(1)} ms`).join('; ')}.`,
    );
  return lines.join('\n');
}
