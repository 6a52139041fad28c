import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { openPglite } from '../../src/db/pglite.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { findClient } from '../../src/auth/clients.js';
import { verifySecret } from '../../src/auth/secrets.js';
import { runToEnd } from './process.js';

describeWith(['pglite'], 'the CLI (embedded database)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-cli-'));
  const env = { DATA_DIR: join(dir, 'data') };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runToEnd('cli.ts', args, env);

  it('imports a document with progress, manages clients (create, update, disable, enable, rotate-secret), and rejects a bad document changing nothing', async () => {
    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify(generateDemo({ idBase: 40, sites: 2, transactionsPerSite: 3 })),
    );
    const imported = await cli('import', good);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toMatch(/sites: 2 received, 2 new or changed/);
    expect(imported.stderr).toMatch(/done in/);

    expect(
      (
        await cli(
          'client',
          'create',
          '--id',
          'ops',
          '--secret',
          'ops-secret-1',
          '--sites',
          '41,42',
          '--cameras',
          '*',
          '--role',
          'viewer',
        )
      ).code,
    ).toBe(0);
    const all = await cli('client', 'create', '--id', 'all', '--sites', '*', '--admin');
    expect(all.code, all.stderr).toBe(0);
    const generated = all.stdout.trim(); // no --secret: a random one, printed once on stdout
    expect(generated).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const listed = await cli('client', 'list');
    expect(listed.stdout).toContain('ops\tsites=41,42\tcameras=*\trole=viewer');
    expect(listed.stdout).toContain('all\tsites=*\tcameras=-\trole=full\tadmin');
    expect(listed.stdout).not.toContain('secret');
    expect(listed.stdout).not.toContain(generated);

    // create refuses an existing id (nothing changes) and site ids that do not exist, in one line each
    const again = await cli(
      'client',
      'create',
      '--id',
      'ops',
      '--secret',
      'other-secret-2',
      '--sites',
      '41',
    );
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(
      'site-monitor: client ops already exists (update it, or rotate its secret, instead)',
    );
    const unknownSite = await cli(
      'client',
      'create',
      '--id',
      'ghost',
      '--secret',
      'ghost-secret',
      '--sites',
      '41,99',
    );
    expect(unknownSite.code).toBe(2);
    expect(unknownSite.stderr.trim()).toBe('site-monitor: unknown site 99');

    const updated = await cli(
      'client',
      'update',
      'ops',
      '--sites',
      '41',
      '--cameras',
      'none',
      '--admin',
      '--role',
      'operator',
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain(
      'siteIds 41,42 -> 41; cameraIds * -> -; admin false -> true; role viewer -> operator',
    );
    const badRole = await cli('client', 'update', 'ops', '--role', 'root');
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role takes one of full, viewer, operator, edge');
    expect((await cli('client', 'disable', 'ops')).code).toBe(0);
    expect((await cli('client', 'list')).stdout).toContain(
      'ops\tsites=41\tcameras=-\trole=operator\tadmin\tdisabled',
    );
    expect((await cli('client', 'enable', 'ops')).code).toBe(0);
    expect((await cli('client', 'list')).stdout).toMatch(
      /^ops\tsites=41\tcameras=-\trole=operator\tadmin$/m,
    );
    const missing = await cli('client', 'disable', 'nobody');
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe('site-monitor: no client nobody'); // one line, not the usage text
    expect((await cli('client', 'rotate-secret', 'nobody')).stderr.trim()).toBe(
      'site-monitor: no client nobody',
    );
    const rotated = await cli('client', 'rotate-secret', 'all');
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = rotated.stdout.trim();
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(fresh).not.toBe(generated);
    const badFlags = await cli(
      'client',
      'create',
      '--id',
      'x',
      '--secret',
      'long-enough',
      '--sites',
      'one,two',
    );
    expect(badFlags.code).toBe(2);
    expect(badFlags.stderr).toContain('--sites');
    expect(badFlags.stderr.trim().split('\n')).toHaveLength(1);

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
      const hash = (id: string) => findClient(db, id).then((c) => c!.secretHash);
      expect(await verifySecret('ops-secret-1', await hash('ops'))).toBe(true); // the refused create changed nothing
      expect(await verifySecret(fresh, await hash('all'))).toBe(true);
      expect(await verifySecret(generated, await hash('all'))).toBe(false);
      expect(await findClient(db, 'ghost')).toBeUndefined();
    } finally {
      await db.close();
    }
    // Text the database cannot hold as written (a lone surrogate) is refused, not stored as U+FFFD.
    const surrogate = join(dir, 'surrogate.json');
    writeFileSync(
      surrogate,
      JSON.stringify({ companies: [{ CompanyID: 77, Name: 'Acme \ud800' }] }),
    );
    const refused = await cli('import', surrogate);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'nothing was changed: companies[0].Name: a lone UTF-16 surrogate',
    );
    const unreadable = await cli('import', join(dir, 'missing.json'));
    expect(unreadable.code).toBe(2);

    // The logs moved out for a value beyond 1e15 (migrations/011), one a line.
    expect((await cli('quarantine')).stderr).toContain('no quarantined logs');
    const held = await openPglite(env.DATA_DIR);
    try {
      await held.query(
        `INSERT INTO quarantined_logs (kind, equipment_id, ts, record)
           VALUES ('meter', 41301, '2025-03-01T00:00:00Z', '{"meter_id": 41301, "flow_rate": 1e308}')`,
      );
    } finally {
      await held.close();
    }
    const quarantined = await cli('quarantine');
    expect(quarantined.code).toBe(0);
    expect(quarantined.stdout.trim().split('\n')).toEqual([
      'meter\t41301\t2025-03-01T00:00:00.000Z\t{"meter_id":41301,"flow_rate":1e+308}',
    ]);
    expect(quarantined.stderr).toContain('1 quarantined log');
  }, 300_000);
});
