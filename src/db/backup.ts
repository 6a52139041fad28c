import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openAsBlob,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { HttpError } from '../errors.js';
import { createPglite, openPglite } from './pglite.js';
import { latestVersion, migrate, schemaVersion } from './migrate.js';
import { lockDataDir, RESTORE_MARKER } from './lock.js';
import type { Database } from './types.js';

// Backup and restore of the embedded database (DATA_DIR) as one file: PGlite's own archive of its
// data directory (dumpDataDir: a gzipped tarball of every file of the PostgreSQL cluster), taken
// after a checkpoint while this process holds the directory. It is an exact copy (sequences,
// partitions, the JWT signing secret, transaction ids), restores without rebuilding anything, and
// PGlite unpacks it itself. It restores with a PGlite of the same PostgreSQL major version (what
// PG_VERSION in it says). The archive is made and unpacked in memory: about three times the data
// directory at the peak, besides PGlite's own few hundred MB.

/** A request that is refused (exit code 2 from the CLI): nothing was written. */
const refused = (message: string) => new HttpError(409, message);

export interface Progress {
  (message: string): void;
}

const MB = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** Bytes of every file under a directory. */
const sizeOf = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) =>
      n +
      (e.isDirectory()
        ? sizeOf(join(dir, e.name))
        : e.isFile()
          ? statSync(join(dir, e.name)).size
          : 0),
    0,
  );

const inside = (dir: string, file: string) => {
  const rel = relative(resolve(dir), resolve(file));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/** Writes the blob under a temporary name, flushed to disk, then renames it: `file` is either whole or absent (or the previous one). */
async function writeAtomically(file: string, blob: Blob): Promise<void> {
  const part = `${file}.${process.pid}.part`;
  try {
    // Readable by its owner only: it holds the client secrets' hashes and the token signing secret.
    const handle = await open(part, 'w', 0o600);
    try {
      for await (const chunk of blob.stream()) await handle.write(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(part, file);
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
  // The rename itself reaches the disk with its directory.
  const fd = openSync(dirname(resolve(file)), 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  schemaVersion: number | undefined;
}

/**
 * Writes the embedded database of dataDir to `file` (replacing it, atomically, only once the new
 * backup is complete). Refused when the directory holds no database or a server (or any process)
 * has it open (DataDirBusyError): PGlite belongs to one process.
 */
export async function backupDataDir(
  dataDir: string,
  file: string,
  progress: Progress = () => {},
): Promise<BackupResult> {
  if (!existsSync(join(dataDir, 'PG_VERSION')))
    throw refused(`${dataDir} holds no embedded database to back up`);
  if (inside(dataDir, file))
    throw refused(`the backup file must be outside the data directory ${dataDir}`);
  if (!existsSync(dirname(resolve(file)))) throw refused(`the directory of ${file} does not exist`);
  const release = lockDataDir(dataDir);
  try {
    progress(`backing up ${dataDir} (${MB(sizeOf(dataDir))} on disk) …`);
    const pg = await createPglite(dataDir);
    let archive: Blob;
    let version: number | undefined;
    try {
      version = await schemaVersion({
        query: async <T>(sql: string) => (await pg.query<T>(sql)).rows,
      });
      // Everything written reaches the data files, so the copy needs no recovery when it opens.
      await pg.exec('CHECKPOINT');
      archive = await pg.dumpDataDir('gzip');
    } finally {
      await pg.close();
    }
    progress(`writing ${file} (${MB(archive.size)}, schema version ${version ?? 'none'}) …`);
    await writeAtomically(file, archive);
    return { file, bytes: archive.size, schemaVersion: version };
  } finally {
    release();
  }
}

export interface RestoreResult {
  /** The backup's schema version, and the one it was migrated to (this build's). */
  from: number;
  to: number;
  migrated: string[];
  sites: number;
  clients: number;
}

/** Whether the file starts as a gzip stream does (a backup is gzipped). */
function looksGzipped(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/**
 * Restores a backup into dataDir, which must be missing or empty (refused otherwise: nothing is
 * overwritten). The database is opened, its schema version checked (a backup of a newer build is
 * refused) and migrated forward to this build's. While it runs, and if it stops halfway, a marker
 * file in the directory keeps every other command and the server out; when it fails the directory
 * is emptied again.
 */
export async function restoreDataDir(
  dataDir: string,
  file: string,
  progress: Progress = () => {},
): Promise<RestoreResult> {
  let size: number;
  try {
    size = statSync(file).size;
    if (!looksGzipped(file)) throw refused(`${file} is not a backup made by site-monitor backup`);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw refused(`cannot read ${file}: ${(err as Error).message}`);
  }
  const present = existsSync(dataDir) ? readdirSync(dataDir) : [];
  if (present.length)
    throw refused(
      `${dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}): ` +
        'restore only into a new or empty directory (move the current one aside first)',
    );
  mkdirSync(dataDir, { recursive: true });
  const marker = join(dataDir, RESTORE_MARKER);
  try {
    // Exclusive: of two restores started together, one goes on.
    writeFileSync(marker, `restore of ${resolve(file)} by process ${process.pid}\n`, {
      flag: 'wx',
    });
  } catch {
    throw refused(`another restore into ${dataDir} has started`);
  }
  // A server that started meanwhile has taken the directory (its lock file is there): leave it be.
  if (readdirSync(dataDir).length !== 1) {
    rmSync(marker, { force: true });
    throw refused(`${dataDir} is no longer empty: something else started using it`);
  }
  let done = false;
  let db: Database | undefined;
  let release: (() => void) | undefined;
  try {
    release = lockDataDir(dataDir, { restoring: true });
    progress(`restoring ${file} (${MB(size)}) into ${dataDir} …`);
    const archive = await openAsBlob(file, { type: 'application/x-gzip' });
    try {
      db = await openPglite(dataDir, archive);
    } catch (err) {
      throw refused(
        `${file} could not be opened as a database by this build: ${(err as Error).message}`,
      );
    }
    const from = await schemaVersion(db);
    const to = latestVersion();
    if (from === undefined) throw refused(`${file} holds no site-monitor database`);
    if (from > to)
      throw refused(
        `${file} is of schema version ${from}, newer than this build's (${to}): restore it with the site-monitor version that made it, or a later one`,
      );
    const migrated = await migrate(db);
    progress(
      migrated.length
        ? `schema version ${from}, migrated to ${to} (${migrated.join(', ')})`
        : `schema version ${from}, this build's`,
    );
    const count = async (table: string) =>
      Number((await db!.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);
    const result = {
      from,
      to,
      migrated,
      sites: await count('sites'),
      clients: await count('clients'),
    };
    await db.close();
    db = undefined;
    rmSync(marker);
    done = true;
    return result;
  } finally {
    await db?.close().catch(() => {});
    release?.();
    // It was empty: everything in it now is this restore's.
    if (!done)
      for (const entry of readdirSync(dataDir))
        if (entry !== RESTORE_MARKER)
          rmSync(join(dataDir, entry), { recursive: true, force: true });
    if (!done) rmSync(marker, { force: true });
  }
}
