// When a build is up to date: its marker file is newer than every file of its sources and than
// package.json. One rule for `npm run build --if-needed` (scripts/build.mjs) and for the tests that
// run the service's build when there is a fresh one (test/operations/process.ts).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time (ms) of the files under `dir`. */
export function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Whether `marker` exists and is newer than every file under `sources` and `root`/package.json. */
export function isFresh(root, marker, sources) {
  return (
    existsSync(marker) &&
    Math.max(...sources.map(newest), statSync(join(root, 'package.json')).mtimeMs) <=
      statSync(marker).mtimeMs
  );
}
