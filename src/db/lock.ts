import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The embedded database belongs to one process at a time: a second one (a CLI next to a running
// server) would corrupt it. A pid file in DATA_DIR says who has it.

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export class DataDirBusyError extends Error {}

/**
 * In DATA_DIR while a restore fills it (src/db/backup.ts); one that did not finish leaves it, and
 * nothing opens the directory then: its database may be partly written.
 */
export const RESTORE_MARKER = 'site-monitor-restore.incomplete';

/** Takes DATA_DIR for this process; returns the release function. Only the restore itself takes a directory it is filling. */
export function lockDataDir(dataDir: string, opts: { restoring?: boolean } = {}): () => void {
  if (!opts.restoring && existsSync(join(dataDir, RESTORE_MARKER)))
    throw new DataDirBusyError(
      `a restore into ${dataDir} is under way or did not finish (${RESTORE_MARKER} is there): wait for it, or empty the directory and restore again`,
    );
  const file = join(dataDir, 'site-monitor.pid');
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (pid && pid !== process.pid && alive(pid))
      throw new DataDirBusyError(
        `the embedded database in ${dataDir} is in use by process ${pid}; stop it first, or use DATABASE_URL (PostgreSQL) to share a database`,
      );
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
}
