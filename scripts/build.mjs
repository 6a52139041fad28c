// Compiles src/ to dist/ and copies the SQL migrations beside the compiled code.
// With --if-needed it does nothing when dist/ is newer than every file in src/.
// With --if-available (npm's `prepare`, run by `npm install` / `npm ci`) it also does nothing where
// the compiler is not installed (an install without dev dependencies, which ships dist/ itself).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'src');
const dist = join(root, 'dist');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const marker = join(dist, 'server.js');
if (process.argv.includes('--if-needed') && existsSync(marker)) {
  const built = statSync(marker).mtimeMs;
  if (newest(src) <= built && statSync(join(root, 'package.json')).mtimeMs <= built) process.exit(0);
}

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch (err) {
  if (process.argv.includes('--if-available')) process.exit(0);
  throw err;
}
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
cpSync(join(src, 'db', 'migrations'), join(dist, 'db', 'migrations'), { recursive: true });
// The packed empty database a first start unpacks instead of running initdb (src/db/pglite-template.ts).
const { writeTemplate } = await import(pathToFileURL(join(dist, 'db', 'pglite-template.js')).href);
await writeTemplate();
// touch the marker so --if-needed sees a fresh build even when tsc wrote nothing
const { utimesSync } = await import('node:fs');
const now = new Date();
utimesSync(marker, now, now);
