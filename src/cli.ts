#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadSettings } from './settings.js';
import { connect, type Database } from './db/index.js';
import {
  changeClient,
  createClient,
  listVisibleClients,
  OPERATOR,
  rotateSecret,
} from './admin/clients.js';
import { HttpError } from './errors.js';
import { isRole, ROLES, type Role } from './auth/roles.js';
import { ImportError, importDocument } from './provisioning/import.js';
import { generateDemo } from './provisioning/demo.js';
import { backupDataDir, restoreDataDir } from './db/backup.js';
import { runRetention } from './telemetry/retention/pass.js';
import { runArchive } from './telemetry/archive/pass.js';
import { ARCHIVE_OFF, describeArchive } from './telemetry/archive/report.js';
import { describeRetention, RETENTION_OFF } from './telemetry/retention/report.js';
import { describeQuarantine, listQuarantined, quarantineLine } from './telemetry/quarantine.js';

const USAGE = `usage: npm run site-monitor -- <command>

  import FILE                      upsert a provisioning document (JSON) in one transaction
  client create --id ID --sites 1,2|'*' [--cameras 1,2|'*'] [--admin] [--role ROLE] [--secret S]
                                   create a client (without --secret a random one is printed once);
                                   ROLE: full (the default), viewer, operator or edge
  client update ID [--sites 1,2|'*'] [--cameras 1,2|'*'|none] [--admin|--no-admin] [--role ROLE]
                                   change a client's sites, cameras, admin right or role
  client list                      list API clients (never their secrets)
  client disable ID                disable a client; its tokens stop working
  client enable ID                 enable a disabled client again
  client rotate-secret ID          give a client a new random secret, printed once (the old one and its tokens stop working)
  demo [--out FILE]                write the demo provisioning document (to stdout without --out)
  backup FILE                      embedded database only: write DATA_DIR's database to one file (server stopped)
  restore FILE                     embedded database only: restore a backup into an empty or new DATA_DIR
  retention                        one retention pass (RETENTION_DAYS): remove the logs of the months
                                   past the horizon, keeping their rollups; prints what it dropped
  archive                          one archive pass (ARCHIVE_AFTER_DAYS): move the days of logs that
                                   are due into the compact archive; prints what, and the bytes
                                   before and after
  quarantine                       list the logs moved out because a value in them was beyond 1e15
                                   (kind, id, time, the record as stored), one a line

The database is the service's: DATABASE_URL (PostgreSQL) or the embedded one in DATA_DIR (stop the
server first; while it runs, use the admin API: /docs, "administration").`;

class UsageError extends Error {}

const idList = (v: string | undefined, flag: string): number[] | '*' | undefined => {
  if (v === undefined) return undefined;
  if (v.trim() === '*') return '*';
  if (v.trim() === 'none') return [];
  const ids = v.split(',').map((s) => Number(s.trim()));
  if (!ids.length || ids.some((n) => !Number.isInteger(n) || n < 1))
    throw new UsageError(`${flag} takes a comma-separated list of ids, or '*'`);
  return ids;
};
const roleOf = (v: string | undefined): Role | undefined => {
  if (v === undefined || isRole(v)) return v;
  throw new UsageError(`--role takes one of ${ROLES.join(', ')}`);
};
/** parseArgs, with its errors (unknown option, missing value) as usage errors. */
function parse<O extends ParseArgsConfig['options']>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
const shown = (ids: unknown) => (Array.isArray(ids) ? ids.join(',') || '-' : String(ids));
const out = (m: string) => process.stdout.write(`${m}\n`);
const log = (m: string) => process.stderr.write(`${m}\n`);

async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await connect(loadSettings());
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
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
  } else if (command === 'client') {
    await runClientCommand(sub, rest);
  } else if (command === 'demo') {
    const { values } = parse(
      [sub, ...rest].filter(Boolean) as string[],
      { out: { type: 'string' } } as const,
    );
    const json = JSON.stringify(generateDemo({ alarmManagement: true }), null, 2);
    if (values.out) writeFileSync(values.out, json);
    else process.stdout.write(`${json}\n`);
  } else if (command === 'backup' || command === 'restore') {
    await runBackupCommand(command, sub, rest);
  } else if (command === 'archive') {
    if (sub) throw new UsageError('archive takes no arguments (the setting is ARCHIVE_AFTER_DAYS)');
    await runArchiveCommand(loadSettings().ARCHIVE_AFTER_DAYS);
  } else if (command === 'retention') {
    if (sub) throw new UsageError('retention takes no arguments (the setting is RETENTION_DAYS)');
    await runRetentionCommand(loadSettings().RETENTION_DAYS);
  } else if (command === 'quarantine') {
    if (sub) throw new UsageError('quarantine takes no arguments');
    const total = await withDatabase((db) =>
      listQuarantined(db, (rows) => rows.forEach((row) => out(quarantineLine(row)))),
    );
    log(describeQuarantine(total));
  } else if (!command || command === 'help' || command === '--help') {
    out(USAGE);
  } else {
    throw new UsageError(`unknown command: ${argv.join(' ')}`);
  }
}

/** backup FILE and restore FILE: the embedded database only (PostgreSQL has pg_dump and pg_restore). */
async function runBackupCommand(
  command: 'backup' | 'restore',
  file: string | undefined,
  extra: string[],
): Promise<void> {
  if (!file || extra.length) throw new UsageError(`${command} takes one FILE`);
  const settings = loadSettings();
  if (settings.DATABASE_URL)
    throw new UsageError(
      `${command} is for the embedded database (DATA_DIR); on PostgreSQL use pg_dump and pg_restore (docs/operations.md, "Backup and restore")`,
    );
  const started = Date.now();
  const took = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (command === 'backup') {
    const { bytes } = await backupDataDir(settings.DATA_DIR, file, log);
    log(`done: ${file}, ${(bytes / 1048576).toFixed(1)} MB in ${took()}`);
  } else {
    const r = await restoreDataDir(settings.DATA_DIR, file, log);
    log(`done: ${r.sites} sites, ${r.clients} clients, schema version ${r.to}, in ${took()}`);
  }
}

/** One retention pass: its progress on stderr, its report on stdout. */
async function runRetentionCommand(days: number): Promise<void> {
  if (days <= 0) {
    out(RETENTION_OFF); // no database to open
    return;
  }
  const started = Date.now();
  const progress = (m: string) => {
    log(`  ${m}`);
  };
  const report = await withDatabase((db) => runRetention(db, { days, progress }));
  for (const line of describeRetention(report)) out(line);
  if (!report.ran) throw new Error('retention did not run; try again later');
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** One archive pass: its progress on stderr, its report on stdout. */
async function runArchiveCommand(days: number): Promise<void> {
  if (days <= 0) {
    out(ARCHIVE_OFF); // no database to open
    return;
  }
  const started = Date.now();
  const report = await withDatabase((db) =>
    runArchive(db, {
      days,
      progress: (m: string) => {
        log(`  ${m}`);
      },
    }),
  );
  for (const line of describeArchive(report)) out(line);
  if (!report.ran) throw new Error('the archive pass did not run; try again later');
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** The client commands: the same functions as the admin API, acting as the operator (no limits). */
async function runClientCommand(sub: string | undefined, args: string[]): Promise<void> {
  const flags = {
    id: { type: 'string' },
    secret: { type: 'string' },
    sites: { type: 'string' },
    cameras: { type: 'string' },
    admin: { type: 'boolean' },
    'no-admin': { type: 'boolean' },
    role: { type: 'string' },
  } as const;
  const { values, positionals } = parse(args, flags);
  const id = positionals[0];
  const needId = () => {
    if (!id) throw new UsageError(`client ${sub} needs a client ID`);
    return id;
  };
  if (sub === 'create') {
    if (!values.id || !values.sites) throw new UsageError('client create needs --id and --sites');
    const request = {
      clientId: values.id,
      clientSecret: values.secret,
      siteIds: idList(values.sites, '--sites')!,
      cameraIds: idList(values.cameras, '--cameras'),
      admin: values.admin,
      role: roleOf(values.role),
    };
    const { client, generatedSecret } = await withDatabase((db) =>
      createClient(db, OPERATOR, request),
    );
    log(
      `client ${client.clientId} created: sites=${shown(client.siteIds)} cameras=${shown(client.cameraIds)} role=${client.role}${client.admin ? ' admin' : ''}`,
    );
    if (generatedSecret) {
      log('its secret (shown only now, keep it):');
      out(generatedSecret);
    }
  } else if (sub === 'update') {
    if (values.admin && values['no-admin'])
      throw new UsageError('give --admin or --no-admin, not both');
    if (!values.sites && !values.cameras && !values.admin && !values['no-admin'] && !values.role)
      throw new UsageError('client update needs --sites, --cameras, --admin, --no-admin or --role');
    const change = {
      siteIds: idList(values.sites, '--sites'),
      cameraIds: idList(values.cameras, '--cameras'),
      admin: values.admin ? true : values['no-admin'] ? false : undefined,
      role: roleOf(values.role),
    };
    const { changes } = await withDatabase((db) => changeClient(db, OPERATOR, needId(), change));
    const what = Object.entries(changes).map(
      ([k, c]) => `${k} ${shown(c!.from)} -> ${shown(c!.to)}`,
    );
    log(`client ${id} ${what.length ? `updated: ${what.join('; ')}` : 'unchanged'}`);
  } else if (sub === 'disable' || sub === 'enable') {
    const { changes } = await withDatabase((db) =>
      changeClient(db, OPERATOR, needId(), { disabled: sub === 'disable' }),
    );
    log(`client ${id} ${changes.disabled ? `${sub}d` : `was already ${sub}d`}`);
  } else if (sub === 'rotate-secret') {
    const secret = await withDatabase((db) => rotateSecret(db, OPERATOR, needId()));
    log(
      `client ${id} has a new secret (shown only now, keep it); the old one and the tokens issued with it no longer work:`,
    );
    out(secret);
  } else if (sub === 'list') {
    const { clients } = await withDatabase((db) =>
      listVisibleClients(db, OPERATOR, { limit: 100_000, offset: 0 }),
    );
    for (const c of clients)
      out(
        `${c.clientId}\tsites=${shown(c.siteIds)}\tcameras=${shown(c.cameraIds)}\trole=${c.role}${c.admin ? '\tadmin' : ''}${c.disabled ? '\tdisabled' : ''}`,
      );
    if (!clients.length) log('no clients');
  } else {
    throw new UsageError(`unknown client command: ${sub ?? '(none)'}`);
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => {
    // One line each; only a usage error points at the usage text.
    if (err instanceof UsageError)
      log(`site-monitor: ${err.message} (see: npm run site-monitor -- help)`);
    else if (err instanceof ImportError)
      log(`site-monitor: import failed, nothing was changed: ${err.message}`);
    else log(`site-monitor: ${err?.message ?? String(err)}`);
    // 2: the request was refused (bad usage, document, id); 1: the command could not run.
    process.exit(
      err instanceof UsageError || err instanceof ImportError || err instanceof HttpError ? 2 : 1,
    );
  },
);
