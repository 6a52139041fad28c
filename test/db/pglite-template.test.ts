import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { openPglite } from '../../src/db/pglite.js';
import { latestVersion, migrate, schemaVersion } from '../../src/db/migrate.js';
import { templateFor, writeTemplate } from '../../src/db/pglite-template.js';

describeWith(['pglite'], 'the packed empty, migrated embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-template-'));
  const template = join(dir, 'template.tar.gz');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is written once, and a new data directory unpacked from it is a working, migrated database that is reopened as such', async () => {
    const stale = join(dir, 'pglite-template-0.0.0-old.tar.gz');
    writeFileSync(stale, 'an older template');
    await writeTemplate(template);
    expect(existsSync(template)).toBe(true);
    expect(existsSync(stale)).toBe(false); // templates of other versions go
    const dataDir = join(dir, 'data');
    expect(templateFor(dataDir, template)).toBe(true);
    const db = await openPglite(dataDir, template);
    // Every migration is in the template already: none is left to apply.
    expect(await schemaVersion(db)).toBe(latestVersion());
    expect(await migrate(db)).toEqual([]);
    await db.query(`INSERT INTO companies (company_id, name) VALUES (1, 'Acme')`);
    await db.close();
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(templateFor(dataDir, template)).toBe(false); // an existing database is never overwritten
    const again = await openPglite(dataDir, template);
    expect(await again.query(`SELECT name FROM companies`)).toEqual([{ name: 'Acme' }]);
    await again.close();
    expect(templateFor(join(dir, 'other'), join(dir, 'missing.tar.gz'))).toBe(false); // no template: initdb as before
  }, 120_000);
});
