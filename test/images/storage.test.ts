import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Access } from '../../src/auth/access.js';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrate.js';
import { prepareBundle } from '../../src/images/bundle.js';
import { readBlob, sha256Hex } from '../../src/images/store.js';
import { importDocument } from '../../src/provisioning/import.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { describeEachBackend, openTestDb, type Backend } from '../helper.js';
import { importable, readZip, type TestImage } from './fixture.js';

const everything = new Access({
  clientId: 't',
  siteIds: null,
  cameraIds: null,
  admin: false,
  role: 'full',
  disabled: false,
});

describeEachBackend('image storage', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 3, imagesPerSite: 0 }));
  });
  afterAll(async () => db?.close());

  const image = (n: number, bytes: Buffer): TestImage => ({
    UUID: `f0000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    Kind: 'ticket',
    SiteID: 1,
    TransactionID: 11001,
    ContentType: 'image/jpeg',
    bytes,
  });

  it('reads a blob back in slices of any size, byte for byte', async () => {
    const m = image(1, randomBytes(100_003));
    await importDocument(db, importable([m]));
    for (const slice of [1_000, 65_536, 100_003, 1 << 20]) {
      const parts: Buffer[] = [];
      for await (const part of readBlob(db, sha256Hex(m.bytes), m.bytes.length, slice))
        parts.push(part);
      expect(parts.length).toBe(Math.ceil(m.bytes.length / slice));
      expect(Buffer.concat(parts).equals(m.bytes)).toBe(true);
    }
  });

  it('breaks the zip off, never completes it, when bytes vanish after the checks', async () => {
    const [a, b] = [image(2, randomBytes(300_000)), image(3, randomBytes(300_000))];
    await importDocument(db, importable([a, b]));
    const bundle = await prepareBundle(db, everything, 'ticket', [a.UUID, b.UUID]);
    await db.query(`DELETE FROM images WHERE uuid = $1`, [b.UUID]);
    await db.query(`DELETE FROM image_blobs WHERE sha256 = decode($1, 'hex')`, [
      sha256Hex(b.bytes),
    ]);
    const read = (async () => {
      const parts: Buffer[] = [];
      for await (const part of bundle.stream) parts.push(part as Buffer);
      return Buffer.concat(parts);
    })();
    await expect(read).rejects.toThrow(/disappeared/);
  });

  it('sends a complete zip when nothing changes meanwhile', async () => {
    const m = image(4, randomBytes(50_000));
    await importDocument(db, importable([m]));
    const bundle = await prepareBundle(db, everything, 'ticket', [m.UUID]);
    const parts: Buffer[] = [];
    for await (const part of bundle.stream) parts.push(part as Buffer);
    const zip = Buffer.concat(parts);
    expect(zip.length).toBe(bundle.size);
    expect((await readZip(zip))[0].bytes.equals(m.bytes)).toBe(true);
  });
});

describeEachBackend('migration 005', (backend: Backend) => {
  let db: Database;
  afterAll(async () => db?.close());

  it('moves the bytes of images stored before it into content-addressed blobs, each once', async () => {
    // A database as it was before 005: the first two migrations applied by hand.
    db = await openTestDb(backend, { migrate: false });
    await db.exec(
      `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const file of ['001_configuration.sql', '002_telemetry.sql']) {
      await db.exec(
        readFileSync(new URL(`../../src/db/migrations/${file}`, import.meta.url), 'utf8'),
      );
      await db.query(`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, [
        Number(file.slice(0, 3)),
        file,
      ]);
    }
    await db.exec(
      `INSERT INTO companies (company_id, name) VALUES (1, 'c'); INSERT INTO sites (site_id, name, company_id) VALUES (1, 's', 1);`,
    );
    const [x, y] = [randomBytes(70_000), randomBytes(10)];
    const old = [
      ['a0000000-0000-4000-8000-000000000001', x],
      ['a0000000-0000-4000-8000-000000000002', y],
      ['a0000000-0000-4000-8000-000000000003', x],
    ] as const;
    for (const [uuid, bytes] of old)
      await db.query(
        `INSERT INTO images (uuid, kind, site_id, content_type, data) VALUES ($1, 'ticket', 1, 'image/jpeg', decode($2, 'base64'))`,
        [uuid, bytes.toString('base64')],
      );

    await migrate(db);
    expect((await db.query(`SELECT count(*)::int AS n FROM image_blobs`))[0].n).toBe(2);
    const columns = await db.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'images' AND table_schema = current_schema()`,
    );
    expect(columns.map((c) => c.column_name)).not.toContain('data');
    for (const [uuid, bytes] of old) {
      const bundle = await prepareBundle(db, everything, 'ticket', [uuid]);
      const parts: Buffer[] = [];
      for await (const part of bundle.stream) parts.push(part as Buffer);
      expect((await readZip(Buffer.concat(parts)))[0].bytes.equals(bytes)).toBe(true);
    }
  });
});
