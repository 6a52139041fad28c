// How long the disk takes to make a small write durable, sampled alongside a run: a child process
// writes 8 kB into a file of `dir` and calls fdatasync, every 10 ms, and reports each call's time.
// PostgreSQL waits for the same kind of flush at every commit (wal_sync_method fdatasync), so a
// run's latency tail can be set beside the disk's: when the disk stalls, every commit waits.
// `dir` must be on the database's disk (for a local PostgreSQL, e.g. /var/lib/postgresql).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The child: one line per call, "<epoch ms> <ms the call took>". */
const CHILD = `
const { openSync, writeSync, fdatasyncSync, closeSync, rmSync } = require('node:fs');
const path = process.argv[1];
const fd = openSync(path, 'w');
const buf = Buffer.alloc(8192, 1);
let off = 0;
const stop = () => { try { closeSync(fd); rmSync(path, { force: true }); } finally { process.exit(0); } };
process.on('SIGTERM', stop);
process.stdin.on('end', stop).resume();
setInterval(() => {
  const t = performance.now();
  writeSync(fd, buf, 0, buf.length, off);
  off = (off + buf.length) % (64 << 20);
  fdatasyncSync(fd);
  process.stdout.write(Date.now() + ' ' + (performance.now() - t).toFixed(2) + '\\n');
}, 10);
`;

export interface FsyncProbe {
  /** The calls that ended between `from` and `to` (epoch ms): count, p50, p99 and max in ms. */
  between(from: number, to: number): { n: number; p50: number; p99: number; max: number };
  stop(): void;
}

export function startFsyncProbe(dir: string): FsyncProbe {
  const file = join(dir, `bench-fsync-probe-${process.pid}.tmp`);
  const child = spawn(process.execPath, ['-e', CHILD, file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const samples: [number, number][] = [];
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const [at, ms] = line.split(' ').map(Number);
      samples.push([at, ms]);
    }
  });
  return {
    between(from, to) {
      const ms = samples
        .filter(([at]) => at >= from && at <= to)
        .map(([, t]) => t)
        .sort((a, b) => a - b);
      const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(ms.length * p))] ?? NaN;
      return { n: ms.length, p50: q(0.5), p99: q(0.99), max: ms[ms.length - 1] ?? NaN };
    },
    stop() {
      child.stdin.end();
    },
  };
}
