import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { runToEnd } from './process.js';

describe('the CLI (embedded database)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-cli-'));
  const env = { DATA_DIR: join(dir, 'data') };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runToEnd('cli.ts', args, env);

  it('imports a document with progress, manages clients, and rejects a bad document changing nothing', async () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(generateDemo({ idBase: 40, sites: 2, transactionsPerSite: 3 })));
    const imported = await cli('import', good);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toMatch(/sites: 2 received, 2 new or changed/);
    expect(imported.stderr).toMatch(/done in/);

    expect((await cli('client', 'create', '--id', 'ops', '--secret', 'ops-secret-1', '--sites', '41,42', '--cameras', '*')).code).toBe(0);
    expect((await cli('client', 'create', '--id', 'all', '--secret', 'all-secret-1', '--sites', '*', '--admin')).code).toBe(0);
    const listed = await cli('client', 'list');
    expect(listed.stdout).toContain('ops\tsites=41,42\tcameras=*');
    expect(listed.stdout).toContain('all\tsites=*\tcameras=-\tadmin');
    expect(listed.stdout).not.toContain('secret');
    expect((await cli('client', 'disable', 'ops')).code).toBe(0);
    expect((await cli('client', 'list')).stdout).toContain('ops\tsites=41,42\tcameras=*\tdisabled');
    const missing = await cli('client', 'disable', 'nobody');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no client nobody');
    const badFlags = await cli('client', 'create', '--id', 'x', '--secret', 'long-enough', '--sites', 'one,two');
    expect(badFlags.code).toBe(2);
    expect(badFlags.stderr).toContain('--sites');

    const doc = generateDemo({ idBase: 40, sites: 2, transactionsPerSite: 3 });
    doc.sites[0].Name = 'must not land';
    doc.pumps[1].MaximumFlow = 'lots';
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(doc));
    const rejected = await cli('import', bad);
    expect(rejected.code).toBe(2);
    expect(rejected.stderr).toContain('nothing was changed: pumps[1].MaximumFlow');

    const db = await openPglite(env.DATA_DIR);
    try {
      const [site] = await db.query(`SELECT name FROM sites WHERE site_id = 41`);
      expect(site.name).not.toBe('must not land');
    } finally {
      await db.close();
    }
    const unreadable = await cli('import', join(dir, 'missing.json'));
    expect(unreadable.code).toBe(2);
  });
});
