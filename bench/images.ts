// Image bundle benchmark (issue 9): 200 ticket images of 200 KB (random bytes, image/jpeg) on
// PostgreSQL, the real server in a child process, one bundle of all of them requested over HTTP.
// Measures time to the first and the last byte, and the server's memory growth from outside the
// process: VmRSS sampled from /proc/<pid>/status every 5 ms, and VmHWM (peak RSS) after its
// peak was reset just before the request (/proc/<pid>/clear_refs). Every entry is checked
// against the imported bytes.
//   npx tsx bench/images.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_RUNS (default 3).
// Uses a schema of its own, dropped after.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import { upsertClient } from '../src/auth/clients.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { readZip } from '../test/images/fixture.js';
import { freePort, startServer, reportSection } from './harness.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IMAGES = 200;
const IMAGE_BYTES = 200 * 1024;
const TARGET_MB = 50;
const SECRET = 'bench-secret-123456';

const kb = (line: string | undefined) => Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN);
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n');
  return {
    rss: kb(status.find((l) => l.startsWith('VmRSS:'))),
    hwm: kb(status.find((l) => l.startsWith('VmHWM:'))),
  };
}
/** Resets the kernel's peak-RSS mark of the process (write "5" to clear_refs; Linux 4.0+). */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

interface Run {
  firstByteMs: number;
  lastByteMs: number;
  bytes: number;
  rssBeforeMb: number;
  sampledGrowthMb: number;
  hwmGrowthMb: number;
}

async function main() {
  await record('images', { postgres: DB_URL });
  const schema = `bench_images_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(DB_URL, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const load = loadavg()[0];
  let stop = async () => {};
  try {
    const db = await openPostgres(DB_URL, { schema });
    await migrate(db);
    const doc = generateDemo({
      sites: 1,
      transactionsPerSite: IMAGES,
      imagesPerSite: 0,
      now: new Date('2026-06-01T12:00:00Z'),
    });
    const images = doc.transactions.map((t: any, i: number) => ({
      UUID: `be000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: t.TransactionID,
      ContentType: 'image/jpeg',
      bytes: randomBytes(IMAGE_BYTES),
    }));
    const t0 = performance.now();
    await importDocument(db, {
      ...doc,
      images: images.map(({ bytes, ...m }) => ({ ...m, DataBase64: bytes.toString('base64') })),
    });
    const importMs = Math.round(performance.now() - t0);
    console.log(`imported ${IMAGES} images of ${IMAGE_BYTES} bytes in ${importMs} ms`);
    await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: [1] });
    await db.close();

    const port = await freePort();
    const url = new URL(DB_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const server = await startServer(port, {
      DATABASE_URL: url.toString(),
      RATE_LIMIT_MAX: '100000000',
    });
    stop = server;
    const base = `http://127.0.0.1:${port}`;
    const tokenRes = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
    });
    const { accessToken } = (await tokenRes.json()) as { accessToken: string };
    const request = (uuids: string[]) =>
      fetch(`${base}/v1/images/tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ uuids }),
      });
    // Warm-up: code paths compiled and the connection pool open, so the runs measure the bundle.
    await (await request(images.slice(0, 5).map((m) => m.UUID))).arrayBuffer();
    await new Promise((r) => setTimeout(r, 500));

    const runs: Run[] = [];
    for (let n = 0; n < RUNS; n++) {
      const before = memory(server.pid);
      resetPeak(server.pid);
      let peakRss = before.rss;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, memory(server.pid).rss)), 5);
      const started = performance.now();
      const res = await request(images.map((m) => m.UUID));
      if (res.status !== 200) throw new Error(`bundle: ${res.status} ${await res.text()}`);
      const parts: Buffer[] = [];
      let firstByteMs = 0;
      for await (const chunk of res.body!) {
        if (!parts.length) firstByteMs = performance.now() - started;
        parts.push(Buffer.from(chunk));
      }
      const lastByteMs = performance.now() - started;
      clearInterval(sampler);
      const after = memory(server.pid);
      const zip = Buffer.concat(parts);
      if (zip.length !== Number(res.headers.get('content-length')))
        throw new Error('content-length differs from the body');
      const entries = await readZip(zip);
      entries.forEach((e, i) => {
        if (e.name !== `${images[i].UUID}.jpg` || !e.bytes.equals(images[i].bytes))
          throw new Error(`entry ${i} differs`);
      });
      const run = {
        firstByteMs: Math.round(firstByteMs),
        lastByteMs: Math.round(lastByteMs),
        bytes: zip.length,
        rssBeforeMb: before.rss / 1024,
        sampledGrowthMb: (Math.max(peakRss, after.rss) - before.rss) / 1024,
        hwmGrowthMb: (after.hwm - before.rss) / 1024,
      };
      runs.push(run);
      console.log(
        `run ${n + 1}: first byte ${run.firstByteMs} ms, last byte ${run.lastByteMs} ms, ${(run.bytes / 1e6).toFixed(1)} MB, ` +
          `RSS before ${run.rssBeforeMb.toFixed(1)} MB, growth sampled ${run.sampledGrowthMb.toFixed(1)} MB, by VmHWM ${run.hwmGrowthMb.toFixed(1)} MB`,
      );
      await new Promise((r) => setTimeout(r, 500));
    }
    const busy = Math.max(load, loadavg()[0]);
    reportSection('Images', report(runs, importMs, load, busy));
  } finally {
    await stop();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
}

function report(runs: Run[], importMs: number, before: number, busy: number): string {
  const worst = Math.max(...runs.map((r) => Math.max(r.sampledGrowthMb, r.hwmGrowthMb)));
  const mb = (v: number) => v.toFixed(1);
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, PostgreSQL on the same machine.`,
    `Command: \`npx tsx bench/images.ts\` (server in a child process on PostgreSQL; the client in this one, over loopback).`,
    `Bundle: POST /v1/images/tickets with ${IMAGES} UUIDs of ${IMAGES} images of ${IMAGE_BYTES / 1024} KB each (random bytes, image/jpeg), imported in ${importMs} ms. Every entry was read back with yauzl and compared with the imported bytes.`,
    `Memory is the server's, read from outside: VmRSS sampled every 5 ms from /proc/<pid>/status, and VmHWM after the peak mark was reset just before each request; growth is against VmRSS just before the request (after a warm-up request of 5 images).`,
    `Load average before the run ${before.toFixed(2)}, highest seen ${busy.toFixed(2)}${busy > 0.7 ? ' (other sessions share this machine)' : ''}.`,
    '',
    '| run | zip | first byte ms | last byte ms | RSS before | growth (sampled VmRSS) | growth (VmHWM) |',
    '|---|---|---|---|---|---|---|',
    ...runs.map(
      (r, i) =>
        `| ${i + 1} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.firstByteMs} | ${r.lastByteMs} | ${mb(r.rssBeforeMb)} MB | ${mb(r.sampledGrowthMb)} MB | ${mb(r.hwmGrowthMb)} MB |`,
    ),
    '',
    `Target (peak memory growth ≤ ${TARGET_MB} MB): ${worst <= TARGET_MB ? 'met' : 'missed'}, largest growth seen ${mb(worst)} MB for a ${(runs[0].bytes / 1e6).toFixed(0)} MB bundle.`,
    ...(runs.length > 1
      ? [
          `RSS before each run: ${runs.map((r) => mb(r.rssBeforeMb)).join(', ')} MB; the later runs grew it by ${runs
            .slice(1)
            .map((r) => mb(Math.max(r.sampledGrowthMb, r.hwmGrowthMb)))
            .join(
              ', ',
            )} MB (memory the process took at the first large response is kept and reused).`,
        ]
      : []),
    `Before the first byte the server checks every image (404, 403) and has PostgreSQL hash each image's stored bytes against their digest (500 if any differ); then it writes the zip while sending it, reading one image at a time in slices of at most 1 MiB.`,
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
