// First start on the embedded database: how long a fresh DATA_DIR takes until /health answers 200
// (database created, migrated, demo data and telemetry generated, server listening), and how large
// the directory is then. The build (`npm start` compiles first when sources changed) is timed apart.
// Usage: npx tsx bench/first-start.ts [runs]   (prints the "First start" report for bench/RESULTS.md)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, freePort, reportSection } from './harness.js';
import { record } from './record.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.argv[2] ?? 3);

/** A clean build, as on a fresh clone (no dist/, no incremental state). */
function timeBuild(): number {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const started = performance.now();
  // Output piped, not inherited, so that the result file keeps it.
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root });
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(build.stdout);
  process.stderr.write(build.stderr);
  if (build.status !== 0) throw new Error(`build failed: ${build.status ?? build.signal}`);
  return seconds;
}

/**
 * Seconds from spawning `node dist/server.js` on an empty DATA_DIR to the first 200 of /health, the
 * CPU seconds the server used until then (what a busy machine stretches), and the directory's size.
 */
async function timeFirstStart(): Promise<{ seconds: number; cpu: number; megabytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-first-start-'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const metricsPort = await freePort(); // metrics on, as deployed; the default port may be taken
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/server.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      METRICS_PORT: String(metricsPort),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
      if (performance.now() - started > 120_000) throw new Error('no answer from /health in 120 s');
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(child.pid!);
    child.kill('SIGTERM');
    await exited;
    const megabytes = Number(
      execFileSync('du', ['-sm', dataDir], { encoding: 'utf8' }).split('\t')[0],
    );
    return { seconds, cpu, megabytes };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

await record('first-start', { pglite: true });
const load = loadavg()[0];
const build = timeBuild();
const results = [];
for (let i = 0; i < runs; i++) {
  results.push(await timeFirstStart());
  const r = results.at(-1)!;
  console.log(
    `run ${i + 1}: /health after ${r.seconds.toFixed(1)} s (${r.cpu.toFixed(1)} s of CPU), data directory ${r.megabytes} MB`,
  );
}
const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const median = medianOf(results.map((r) => r.seconds));
const cpu = medianOf(results.map((r) => r.cpu));
const loadAfter = loadavg()[0];
const size = Math.max(...results.map((r) => r.megabytes));
console.log(
  `build ${build.toFixed(1)} s; first start median ${median.toFixed(1)} s (${cpu.toFixed(1)} s of CPU); data directory ${size} MB`,
);

reportSection(
  'First start',
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}; ` +
    `one-minute load average ${load.toFixed(2)} before the run and ${loadAfter.toFixed(2)} after it (other work on the machine stretches the wall times; the CPU time much less).
Command: \`npx tsx bench/first-start.ts ${runs}\` (\`node dist/server.js\` on an empty \`DATA_DIR\`, demo data on, until \`GET /health\` answers 200).

| what | figure |
|---|---|
| first start to \`/health\` 200, median of ${runs} (runs: ${results.map((r) => r.seconds.toFixed(1)).join(', ')} s) | ${median.toFixed(1)} s |
| CPU time of the server process until then, median | ${cpu.toFixed(1)} s |
| data directory after the first start | ${size} MB |
| \`npm run build\` from clean, template included (\`npm install\` runs it; \`npm start\` again when sources changed) | ${build.toFixed(1)} s |

Target: \`/health\` within 10 s and the directory under 100 MB: ${median <= 10 ? 'met' : 'missed'} (${median.toFixed(1)} s), ${size < 100 ? 'met' : 'missed'} (${size} MB).
`,
);
