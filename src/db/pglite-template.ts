import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

// A freshly initialised embedded database with every migration applied, packed once by the build
// (`npm run build`, which `npm install` runs): a new DATA_DIR is unpacked from it instead of running
// PostgreSQL's initdb and then each migration at the first start. The file is named after the
// installed PGlite version and the migrations it holds, so an upgrade never unpacks a data directory
// of another version (it runs initdb then) and a changed migration is never taken as applied (a new
// template is built; without one, the migrations run at the first start as on PostgreSQL).

const pgliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version;
};

const migrations = fileURLToPath(new URL('./migrations/', import.meta.url));

/** A digest of the migration files (names and contents), empty when there are none beside this module. */
const migrationsDigest = (): string => {
  if (!existsSync(migrations)) return 'none';
  const hash = createHash('sha256');
  for (const f of readdirSync(migrations).sort())
    if (/^\d{3}_.+\.sql$/.test(f))
      hash
        .update(f)
        .update('\0')
        .update(readFileSync(join(migrations, f)));
  return hash.digest('hex').slice(0, 12);
};

const PREFIX = 'pglite-template-';

/** Where the build puts the template: beside the compiled code (dist/), absent when run from source. */
export const TEMPLATE = fileURLToPath(
  new URL(`../${PREFIX}${pgliteVersion()}-${migrationsDigest()}.tar.gz`, import.meta.url),
);

/**
 * Packs an empty, initialised and migrated database into `file` unless it is there already; the
 * templates of other versions beside it are removed.
 */
export async function writeTemplate(file = TEMPLATE): Promise<void> {
  if (existsSync(file)) return;
  // Imported here: the embedded database's module imports this one.
  const { createPglite, wrapPglite } = await import('./pglite.js');
  const { migrate } = await import('./migrate.js');
  const pg = await createPglite(undefined);
  try {
    await migrate(wrapPglite(pg));
    // Everything written reaches the data files, so an unpacked copy needs no recovery.
    await pg.exec('CHECKPOINT');
    const tar = await pg.dumpDataDir('gzip');
    mkdirSync(dirname(file), { recursive: true });
    // Written aside and renamed, so a build killed halfway leaves no truncated template.
    writeFileSync(`${file}.part`, Buffer.from(await tar.arrayBuffer()));
    renameSync(`${file}.part`, file);
  } finally {
    await pg.close();
  }
  for (const f of readdirSync(dirname(file)))
    if (f.startsWith(PREFIX) && f !== basename(file))
      rmSync(join(dirname(file), f), { force: true });
}

/** Whether a data directory that has no database yet can be unpacked from the template `file`. */
export function templateFor(dataDir: string, file = TEMPLATE): boolean {
  return !existsSync(join(dataDir, 'PG_VERSION')) && existsSync(file);
}

/**
 * Unpacks the template `file` (a gzipped tar, as PGlite's dumpDataDir writes it) into `dataDir`, here
 * rather than through PGlite's loadDataDir (about as fast: creating the files is most of it), so that
 * PG_VERSION, which marks a directory as holding a database, is written last: an unpacking cut short
 * is unpacked again at the next start.
 */
export function unpackTemplate(dataDir: string, file = TEMPLATE): void {
  const tar = gunzipSync(readFileSync(file));
  const root = resolve(dataDir);
  const text = (at: number, length: number) =>
    tar.toString('latin1', at, at + length).replace(/\0.*$/s, '');
  const octal = (at: number, length: number) => parseInt(text(at, length).trim() || '0', 8);
  let last: [string, Buffer, number] | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    const name = text(at, 100);
    if (!name) break; // the end: blocks of zeros
    const prefix = text(at + 345, 155);
    const path = resolve(root, `./${prefix ? `${prefix}/` : ''}${name}`);
    if (path !== root && !path.startsWith(root + sep))
      throw new Error(`template ${file}: ${name} is outside the data directory`);
    const mode = octal(at + 100, 8) & 0o777;
    const size = octal(at + 124, 12);
    const type = text(at + 156, 1) || '0';
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === '5') mkdirSync(path, { recursive: true, mode });
    else if (type === '0') {
      mkdirSync(dirname(path), { recursive: true });
      if (basename(path) === 'PG_VERSION' && dirname(path) === root) last = [path, body, mode];
      else writeFileSync(path, body, { mode });
    } else
      throw new Error(`template ${file}: entry ${name} of type ${type} is not a file or directory`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  if (!last) throw new Error(`template ${file} holds no PG_VERSION`);
  writeFileSync(last[0], last[1], { mode: last[2] });
}
