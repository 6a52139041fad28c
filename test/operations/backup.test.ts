import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { connect } from '../../src/db/index.js';
import { RESTORE_MARKER } from '../../src/db/lock.js';
import { latestVersion, migrate, schemaVersion } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';
import { describeEachBackend, describeWith, openTestDb } from '../helper.js';
import { appOn, expectSameAnswers, loadDatabase, takeAnswers } from './backup-fixture.js';
import { runToEnd } from './process.js';

// Backup and restore (docs/operations.md, "Backup and restore"): a loaded database is backed up,
// restored into a fresh one, and every read answers the same bytes there. The embedded database
// through the CLI's backup and restore commands (each its own process), PostgreSQL through
// pg_dump -Fc and pg_restore, as documented.

describeWith(
  ['pglite'],
  'backup and restore of the embedded database (site-monitor backup FILE / restore FILE)',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'site-monitor-backup-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const cli = (dataDir: string, ...args: string[]) =>
      runToEnd('cli.ts', args, { DATA_DIR: dataDir });

    it('backs up a loaded database (refused while it is in use), refuses to restore over a non-empty directory, and the restored copy answers every read identically', async () => {
      const source = join(dir, 'source');
      const file = join(dir, 'site.backup');
      let db = await connect({ DATA_DIR: source });
      let token: string;
      let before: Record<string, string>;
      try {
        token = await loadDatabase(db);
        before = await takeAnswers(db, token);
        // A process (a server) has the database: the backup refuses, and writes nothing.
        const busy = await cli(source, 'backup', file);
        expect(busy.code, busy.stderr).toBe(1);
        expect(busy.stderr).toContain('in use by process');
        expect(existsSync(file)).toBe(false);
      } finally {
        await db.close();
      }

      const within = await cli(source, 'backup', join(source, 'site.backup'));
      expect(within.code).toBe(2);
      expect(within.stderr).toContain('must be outside the data directory');

      const made = await cli(source, 'backup', file);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).toMatch(/^backing up .+ \([\d.]+ MB on disk\) …$/m);
      expect(made.stderr).toMatch(/^done: .+site\.backup, [\d.]+ MB in [\d.]+ s$/m);
      expect(statSync(file).mode & 0o777).toBe(0o600); // it holds secrets' hashes and the signing secret
      expect(readdirSync(dir).sort()).toEqual(['site.backup', 'source']); // no temporary file left

      const over = await cli(source, 'restore', file);
      expect(over.code).toBe(2);
      expect(over.stderr).toContain('is not empty');

      const target = join(dir, 'target');
      const restored = await cli(target, 'restore', file);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toContain(`schema version ${latestVersion()}, this build's`);
      expect(restored.stderr).toMatch(
        /^done: 4 sites, 2 clients, schema version \d+, in [\d.]+ s$/m,
      );
      expect(readdirSync(target)).not.toContain(RESTORE_MARKER);
      expect(readdirSync(target)).not.toContain('site-monitor.pid');

      db = await connect({ DATA_DIR: target });
      try {
        // The same token: the signing secret came with the database.
        expectSameAnswers(await takeAnswers(db, token), before);
      } finally {
        await db.close();
      }
    }, 300_000);

    it('migrates an older backup forward, refuses a newer one or a file that is not a backup (leaving the directory empty), and nothing opens a directory whose restore did not finish', async () => {
      // A database of the build before the last migration.
      const older = join(dir, 'older');
      const migrations = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
      const files = readdirSync(migrations)
        .filter((f) => /^\d{3}_.+\.sql$/.test(f))
        .sort();
      const db = await openPglite(older);
      try {
        await db.exec(
          `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        for (const f of files.slice(0, -1)) {
          await db.exec(readFileSync(join(migrations, f), 'utf8'));
          await db.query(`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, [
            Number(f.slice(0, 3)),
            f,
          ]);
        }
        await db.query(`INSERT INTO companies (company_id, name) VALUES (7, 'Older Ltd')`);
      } finally {
        await db.close();
      }
      const olderFile = join(dir, 'older.backup');
      const made = await cli(older, 'backup', olderFile);
      expect(made.code, made.stderr).toBe(0);
      // The version before the last (migration numbers may have gaps while branches merge).
      const previous = Number(files.at(-2)!.slice(0, 3));
      expect(made.stderr).toContain(`schema version ${previous})`);

      const migrated = join(dir, 'migrated');
      const restored = await cli(migrated, 'restore', olderFile);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toContain(
        `schema version ${previous}, migrated to ${latestVersion()} (${files.at(-1)})`,
      );
      const back = await connect({ DATA_DIR: migrated });
      try {
        expect(await schemaVersion(back)).toBe(latestVersion());
        expect(await back.query(`SELECT name FROM companies`)).toEqual([{ name: 'Older Ltd' }]);
        // Now pretend a later build made it.
        await back.query(
          `INSERT INTO schema_migrations (version, name) VALUES ($1, 'future.sql')`,
          [latestVersion() + 1],
        );
      } finally {
        await back.close();
      }
      const newerFile = join(dir, 'newer.backup');
      expect((await cli(migrated, 'backup', newerFile)).code).toBe(0);
      const refusedDir = join(dir, 'refused');
      const newer = await cli(refusedDir, 'restore', newerFile);
      expect(newer.code).toBe(2);
      expect(newer.stderr).toContain(`newer than this build's (${latestVersion()})`);
      expect(readdirSync(refusedDir)).toEqual([]); // emptied again, so a restore can be tried again

      const text = join(dir, 'notes.txt');
      writeFileSync(text, 'not a backup');
      const notBackup = await cli(refusedDir, 'restore', text);
      expect(notBackup.code).toBe(2);
      expect(notBackup.stderr).toContain('is not a backup made by site-monitor backup');
      const gzipped = join(dir, 'notes.gz');
      writeFileSync(gzipped, gzipSync('not a tarball either'));
      const notTar = await cli(refusedDir, 'restore', gzipped);
      expect(notTar.code).toBe(2);
      expect(notTar.stderr).toContain('could not be opened as a database by this build');
      expect(readdirSync(refusedDir)).toEqual([]);
      expect((await cli(refusedDir, 'restore', join(dir, 'missing.backup'))).code).toBe(2);

      // A restore that stopped halfway (its marker is there): the CLI and the server keep out.
      const halfway = join(dir, 'halfway');
      mkdirSync(halfway);
      writeFileSync(join(halfway, RESTORE_MARKER), '');
      writeFileSync(join(halfway, 'PG_VERSION'), '17\n');
      const list = await cli(halfway, 'client', 'list');
      expect(list.code).toBe(1);
      expect(list.stderr).toContain('did not finish');
      expect((await cli(halfway, 'backup', join(dir, 'half.backup'))).stderr).toContain(
        'did not finish',
      );

      // PostgreSQL has its own tools.
      const onPostgres = await runToEnd('cli.ts', ['backup', join(dir, 'x.backup')], {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(onPostgres.code).toBe(2);
      expect(onPostgres.stderr).toContain('use pg_dump and pg_restore');
    }, 300_000);
  },
);

const pgDumpVersion = spawnSync('pg_dump', ['--version'], { encoding: 'utf8' });
const run = promisify(execFile);

describeWith(
  ['postgres', 'pg_dump'],
  'backup and restore on PostgreSQL: pg_dump -Fc, pg_restore --no-owner into a fresh database (needs TEST_DATABASE_URL and the pg_dump and pg_restore programs)',
  () => {
    // Made in the test: a skipped suite's body still runs (without TEST_DATABASE_URL).
    let admin: pg.Client | undefined;
    let dir: string | undefined;
    const name = `bk_${randomBytes(5).toString('hex')}`;
    afterAll(async () => {
      await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin?.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => {});
      await admin?.end().catch(() => {});
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a dump of a loaded database restored into a fresh one answers every read identically, sequences, partitions and the signing secret included', async () => {
      const url = process.env.TEST_DATABASE_URL!;
      const fresh = new URL(url);
      fresh.pathname = `/${name}`;
      dir = mkdtempSync(join(tmpdir(), 'site-monitor-pgdump-'));
      admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const [{ server_version_num: server }] = (await admin.query('SHOW server_version_num')).rows;
      const client = Number(/(\d+)\.\d+/.exec(pgDumpVersion.stdout)![1]);
      expect(
        client,
        `pg_dump ${client} cannot dump a PostgreSQL ${server} server`,
      ).toBeGreaterThanOrEqual(Math.floor(Number(server) / 10000));
      // The service's database is a schema of the test database here (in production, a database of its own).
      await admin.query(`CREATE SCHEMA ${name}`);
      const source = await openPostgres(url, { schema: name });
      const file = join(dir, 'site-monitor.dump');
      let token: string;
      let before: Record<string, string>;
      const facts = `SELECT
          (SELECT json_agg(json_build_array(sequencename, last_value) ORDER BY sequencename)
             FROM pg_sequences WHERE schemaname = $1) AS sequences,
          (SELECT count(*)::int FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1) AS partitions,
          (SELECT value FROM service_settings WHERE key = 'jwt_secret') AS secret`;
      let sourceFacts: unknown;
      try {
        await migrate(source);
        token = await loadDatabase(source);
        before = await takeAnswers(source, token);
        sourceFacts = (await source.query(facts, [name]))[0];
        await run('pg_dump', ['-Fc', '--schema', name, '-f', file, '-d', url]);
      } finally {
        await source.close();
      }

      await admin.query(`CREATE DATABASE ${name}`);
      await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', fresh.toString(), file]);
      const restored = await openPostgres(fresh.toString(), { schema: name });
      try {
        expect(await migrate(restored)).toEqual([]); // what the service does at start: nothing to do
        expect((await restored.query(facts, [name]))[0]).toEqual(sourceFacts);
        expectSameAnswers(await takeAnswers(restored, token), before);
        // And it goes on: a new alarm gets the next id, not one of the restored ones.
        const app = await appOn(restored);
        try {
          const res = await app.inject({
            method: 'POST',
            url: '/v1/edge/alarms',
            headers: { authorization: `Bearer ${token}` },
            payload: {
              siteId: 2,
              alarmType: 'AfterRestore',
              severity: 'minor',
              message: 'new',
              timestamp: new Date().toISOString(),
            },
          });
          expect(res.statusCode, res.body).toBe(201);
        } finally {
          await app.close();
        }
      } finally {
        await restored.close();
      }
    }, 300_000);
  },
);

describeEachBackend('a database restored from a dump of another server', (backend) => {
  it('drops, at start, stream events of transactions this server has not reached, and marks them pruned', async () => {
    const db = await openTestDb(backend);
    try {
      const event = (xid: string) =>
        db.query(
          `INSERT INTO stream_events (xid, site_id, type, data) VALUES (${xid}, 1, 'config', '{}')`,
        );
      await event('pg_current_xact_id()'); // one of this server's: kept
      await event(`'4000000000'::xid8`); // ahead of this server: from the other one
      const app = await appOn(db);
      await app.close();
      expect(await db.query(`SELECT xid::text FROM stream_events`)).toEqual([
        { xid: expect.not.stringMatching(/^4000000000$/) },
      ]);
      expect(await db.query(`SELECT pruned_xmax::text AS x FROM stream_state`)).toEqual([
        { x: '4000000001' },
      ]);
    } finally {
      await db.close();
    }
  });
});
