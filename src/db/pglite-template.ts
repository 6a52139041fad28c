import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

// A freshly initialised embedded database, packed once by the build (`npm run build`, which
// `npm install` runs): a new DATA_DIR is unpacked from it instead of running PostgreSQL's initdb,
// about 1.5 s of CPU instead of 5 at the first start. The file is named after the installed PGlite
// version, so an upgrade never unpacks a data directory of another version (it runs initdb then).

const pgliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version;
};

/** Where the build puts the template: beside the compiled code (dist/), absent when run from source. */
export const TEMPLATE = fileURLToPath(
  new URL(`../pglite-template-${pgliteVersion()}.tar.gz`, import.meta.url),
);

/** Packs an empty, initialised database into `file` unless it is there already. */
export async function writeTemplate(file = TEMPLATE): Promise<void> {
  if (existsSync(file)) return;
  const pg = await PGlite.create();
  try {
    const tar = await pg.dumpDataDir('gzip');
    mkdirSync(dirname(file), { recursive: true });
    // Written aside and renamed, so a build killed halfway leaves no truncated template.
    writeFileSync(`${file}.part`, Buffer.from(await tar.arrayBuffer()));
    renameSync(`${file}.part`, file);
  } finally {
    await pg.close();
  }
}

/** The template for a data directory that has none yet; undefined when the directory holds a database or there is no template. */
export function templateFor(dataDir: string, file = TEMPLATE): Blob | undefined {
  if (existsSync(join(dataDir, 'PG_VERSION')) || !existsSync(file)) return undefined;
  return new Blob([readFileSync(file)]);
}
