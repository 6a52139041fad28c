// Compiles src/ to dist/ and copies the SQL migrations beside the compiled code, then builds the
// web console (console/, with Vite) into dist/console with a gzipped copy of each text file.
// With --if-needed it skips either part when its output is newer than every one of its sources.
// With --if-available (npm's `prepare`, run by `npm install` / `npm ci`) it also does nothing where
// the compiler is not installed (an install without dev dependencies, which ships dist/ itself).
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { isFresh } from './fresh.mjs';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'src');
const dist = join(root, 'dist');

const ifNeeded = process.argv.includes('--if-needed');
const ifAvailable = process.argv.includes('--if-available');
const fresh = (marker, sources) => ifNeeded && isFresh(root, marker, sources);
const resolve = (id) => {
  try {
    return createRequire(import.meta.url).resolve(id);
  } catch (err) {
    // An install without dev dependencies ships dist/ itself.
    if (ifAvailable) return undefined;
    throw err;
  }
};
const touch = (file) => {
  const now = new Date();
  utimesSync(file, now, now);
};

const marker = join(dist, 'server.js');
if (!fresh(marker, [src])) {
  const tsc = resolve('typescript/bin/tsc');
  if (tsc) {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
      stdio: 'inherit',
    });
    cpSync(join(src, 'db', 'migrations'), join(dist, 'db', 'migrations'), { recursive: true });
    // The packed empty database a first start unpacks instead of running initdb (src/db/pglite-template.ts).
    const { writeTemplate } = await import(
      pathToFileURL(join(dist, 'db', 'pglite-template.js')).href
    );
    await writeTemplate();
    // touch the marker so --if-needed sees a fresh build even when tsc wrote nothing
    touch(marker);
  }
}

const consoleSrc = join(root, 'console');
const consoleOut = join(dist, 'console');
const consoleMarker = join(consoleOut, 'index.html');
if (!fresh(consoleMarker, [consoleSrc]) && resolve('vite')) {
  const { build } = await import('vite');
  await build({ configFile: join(consoleSrc, 'vite.config.ts') });
  // Served as they are to browsers that accept gzip (nearly all): no compression per request.
  const compress = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) compress(p);
      else if (/\.(js|css|html|svg|json)$/.test(e.name))
        writeFileSync(`${p}.gz`, gzipSync(readFileSync(p), { level: 9 }));
    }
  };
  compress(consoleOut);
  touch(consoleMarker);
}
