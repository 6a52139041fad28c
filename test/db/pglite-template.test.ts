import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { openPglite } from '../../src/db/pglite.js';
import { migrate } from '../../src/db/migrate.js';
import { templateFor, writeTemplate } from '../../src/db/pglite-template.js';

describeWith(['pglite'], 'the packed empty embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-template-'));
  const template = join(dir, 'template.tar.gz');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is written once, and a new data directory unpacked from it is a working database that is reopened as such', async () => {
    await writeTemplate(template);
    expect(existsSync(template)).toBe(true);
    const dataDir = join(dir, 'data');
    expect(templateFor(dataDir, template)).toBeInstanceOf(Blob);
    const db = await openPglite(dataDir, template);
    expect(await migrate(db)).toContain('001_configuration.sql');
    await db.query(`INSERT INTO companies (company_id, name) VALUES (1, 'Acme')`);
    await db.close();
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    expect(templateFor(dataDir, template)).toBeUndefined(); // an existing database is never overwritten
    const again = await openPglite(dataDir, template);
    expect(await again.query(`SELECT name FROM companies`)).toEqual([{ name: 'Acme' }]);
    await again.close();
    expect(templateFor(join(dir, 'other'), join(dir, 'missing.tar.gz'))).toBeUndefined(); // no template: initdb as before
  }, 120_000);
});
