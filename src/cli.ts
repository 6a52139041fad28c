#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { connect, type Database } from './db/index.js';
import { DataDirBusyError } from './db/lock.js';
import { disableClient, listClients, upsertClient } from './auth/clients.js';
import { ImportError, importDocument } from './provisioning/import.js';
import { generateDemo } from './provisioning/demo.js';

const USAGE = `usage: npm run site-monitor -- <command>

  import FILE                      upsert a provisioning document (JSON) in one transaction
  client create --id ID --secret S --sites 1,2|'*' [--cameras 1,2|'*'] [--admin]
  client list                      list API clients (never their secrets)
  client disable ID                disable a client; its tokens stop working
  demo [--out FILE]                write the demo provisioning document (to stdout without --out)

The database is the service's: DATABASE_URL (PostgreSQL) or the embedded one in DATA_DIR.`;

class UsageError extends Error {}

const idList = (v: string | undefined, flag: string): number[] | '*' | undefined => {
  if (v === undefined) return undefined;
  if (v.trim() === '*') return '*';
  const ids = v.split(',').map((s) => Number(s.trim()));
  if (!ids.length || ids.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError(`${flag} takes a comma-separated list of ids, or '*'`);
  return ids;
};

async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await connect(loadConfig());
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  const log = (m: string) => process.stderr.write(`${m}\n`);
  if (command === 'import') {
    if (!sub) throw new UsageError('import needs a FILE');
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(sub, 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read ${sub} as JSON: ${(err as Error).message}`);
    }
    const started = Date.now();
    await withDatabase(async (db) => {
      log(`importing ${sub} …`);
      await importDocument(db, doc, { progress: (m) => log(`  ${m}`) });
    });
    log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } else if (command === 'client' && sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { id: { type: 'string' }, secret: { type: 'string' }, sites: { type: 'string' }, cameras: { type: 'string' }, admin: { type: 'boolean' } },
    });
    if (!values.id || !values.secret || !values.sites) throw new UsageError('client create needs --id, --secret and --sites');
    if (values.secret.length < 8) throw new UsageError('--secret must be at least 8 characters');
    const siteIds = idList(values.sites, '--sites')!;
    const cameraIds = idList(values.cameras, '--cameras');
    await withDatabase((db) => upsertClient(db, { clientId: values.id!, clientSecret: values.secret!, siteIds, cameraIds, admin: values.admin }));
    log(`client ${values.id} saved`);
  } else if (command === 'client' && sub === 'list') {
    const clients = await withDatabase((db) => listClients(db));
    for (const c of clients)
      process.stdout.write(
        `${c.clientId}\tsites=${c.siteIds ? c.siteIds.join(',') || '-' : '*'}\tcameras=${c.cameraIds ? c.cameraIds.join(',') || '-' : '*'}` +
          `${c.admin ? '\tadmin' : ''}${c.disabled ? '\tdisabled' : ''}\n`,
      );
    if (!clients.length) log('no clients');
  } else if (command === 'client' && sub === 'disable') {
    const id = rest[0];
    if (!id) throw new UsageError('client disable needs an ID');
    const found = await withDatabase((db) => disableClient(db, id));
    if (!found) throw new UsageError(`no client ${id}`);
    log(`client ${id} disabled`);
  } else if (command === 'demo') {
    const { values } = parseArgs({ args: [sub, ...rest].filter(Boolean) as string[], options: { out: { type: 'string' } } });
    const json = JSON.stringify(generateDemo(), null, 2);
    if (values.out) writeFileSync(values.out, json);
    else process.stdout.write(`${json}\n`);
  } else if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
  } else {
    throw new UsageError(`unknown command: ${argv.join(' ')}`);
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => {
    if (err instanceof UsageError) process.stderr.write(`site-monitor: ${err.message}\n\n${USAGE}\n`);
    else if (err instanceof ImportError) process.stderr.write(`site-monitor: import failed, nothing was changed: ${err.message}\n`);
    else if (err instanceof ConfigError || err instanceof DataDirBusyError) process.stderr.write(`site-monitor: ${err.message}\n`);
    else process.stderr.write(`site-monitor: ${err?.message ?? String(err)}\n`);
    process.exit(err instanceof UsageError || err instanceof ImportError ? 2 : 1);
  },
);
