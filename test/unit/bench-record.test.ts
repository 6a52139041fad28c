import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createResultFile,
  describeDatabase,
  formatFooter,
  formatHeader,
  pgliteVersion,
  redact,
  relevantEnv,
  resultFileName,
  SETTINGS,
} from '../../bench/record.js';
import { openPglite } from '../../src/db/pglite.js';
import type { Queryable } from '../../src/db/index.js';

describe('bench result files', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('are named by the UTC date and the bench, then -2, -3 for later runs of the day', () => {
    const late = new Date('2026-11-22T23:30:00-05:00'); // already the 23rd in UTC
    expect(resultFileName('config', late)).toBe('2026-11-23-config.txt');
    expect(resultFileName('first-start', late, 2)).toBe('2026-11-23-first-start-2.txt');
    expect(() => resultFileName('../x', late)).toThrow();
  });

  it('never overwrite an earlier run of the same day', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-record-'));
    dirs.push(dir);
    const day = new Date('2026-11-22T08:00:00Z');
    writeFileSync(join(dir, '2026-11-22-ingest.txt'), 'earlier run\n');
    const second = createResultFile(dir, 'ingest', day);
    const third = createResultFile(dir, 'ingest', day);
    expect([second.path, third.path].map((p) => p.slice(dir.length + 1))).toEqual([
      '2026-11-22-ingest-2.txt',
      '2026-11-22-ingest-3.txt',
    ]);
    expect(readFileSync(join(dir, '2026-11-22-ingest.txt'), 'utf8')).toBe('earlier run\n');
    expect(readdirSync(dir)).toHaveLength(3);
  });

  it('list the bench settings of the environment, passwords hidden', () => {
    expect(
      relevantEnv({
        HOME: '/root',
        BENCH_DURATION: '5',
        SOAK_MINUTES: '1',
        BENCH_DATABASE_URL: 'postgres://bench:s3cret@db:5432/test',
        GROUP_COMMIT: '0',
      }),
    ).toEqual([
      ['BENCH_DATABASE_URL', 'postgres://bench:***@db:5432/test'],
      ['BENCH_DURATION', '5'],
      ['GROUP_COMMIT', '0'],
      ['SOAK_MINUTES', '1'],
    ]);
    expect(redact('postgres://postgres@127.0.0.1:5432/test')).toBe(
      'postgres://postgres@127.0.0.1:5432/test',
    );
  });

  it('begin with a header and end with the wall time', () => {
    const header = formatHeader({
      name: 'config',
      started: new Date('2026-11-22T08:00:00Z'),
      command: 'npx tsx bench/config.ts',
      env: [['BENCH_DURATION', '5']],
      machine: {
        os: 'Linux 6.1',
        cpu: 'AMD EPYC',
        cores: 2,
        memory: 8 * 1024 ** 3,
        free: 1024 ** 3,
        load: [0.5, 0.25, 0.1],
      },
      node: 'v20.20.2',
      commit: 'abc1234 A change',
      databases: ['PostgreSQL 15.20; autovacuum=on'],
    });
    expect(header.split('\n').slice(0, 9)).toEqual([
      '# bench/config: 2026-11-22T08:00:00.000Z',
      'command:  npx tsx bench/config.ts',
      'env:      BENCH_DURATION=5',
      'code:     abc1234 A change',
      'machine:  2 × AMD EPYC, 8.0 GiB memory (1.0 GiB free), Linux 6.1',
      'load:     0.50 0.25 0.10 (1, 5, 15 min averages at start)',
      'node:     v20.20.2',
      'database: PostgreSQL 15.20; autovacuum=on',
      'manual VACUUM/ANALYZE: none (the database as the service leaves it, autovacuum as configured)',
    ]);
    expect(formatFooter(0, 61_500, 0)).toMatch(/^\n# wall time 61\.5 s, exit code 0, load average/);
  });

  it('describe a database by its version and the settings that move figures', async () => {
    const fake: Queryable = {
      query: async (sql: string) =>
        (sql.includes('server_version')
          ? [{ v: '15.20 (Debian 15.20-0+deb12u1)' }]
          : [
              { name: 'work_mem', value: '4MB' },
              { name: 'autovacuum', value: 'on' },
            ]) as any,
    };
    expect(await describeDatabase(fake)).toBe(
      'PostgreSQL 15.20 (Debian 15.20-0+deb12u1); autovacuum=on, shared_buffers=?, work_mem=4MB, max_connections=?, synchronous_commit=?, fsync=?, wal_level=?',
    );
  });

  it('read the settings from PGlite through its connection', async () => {
    const db = await openPglite();
    try {
      const line = await describeDatabase(db, 'pglite');
      expect(line.startsWith(`PGlite ${pgliteVersion()} (PostgreSQL `)).toBe(true);
      expect(pgliteVersion()).toMatch(/^\d+\.\d+\.\d+/);
      for (const s of SETTINGS) expect(line).toMatch(new RegExp(`${s}=[^?]`));
    } finally {
      await db.close();
    }
  });
});
