import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { Queryable } from '../db/index.js';
import type { Access } from '../auth/access.js';
import { badRequest, forbidden, listIds, notFound, serverError } from '../errors.js';
import { intactDigests, readBlob } from './store.js';

// An image bundle (interface 4.5, contract 7): every check is made before the first byte is sent,
// in the contract's order: 400 (list), 404 (unknown or of the other kind), 403 (site, and camera
// for motion images), 500 (bytes that do not hash to their digest). Then a zip is written while it
// is sent: one image at a time, a slice at a time, entries stored uncompressed (images are
// compressed already), so memory stays flat however large the bundle.

export type ImageKind = 'ticket' | 'motion';

export interface BundleEntry {
  uuid: string;
  contentType: string;
  sha256: string;
  size: number;
  mtime: Date;
}

export interface Bundle {
  entries: BundleEntry[];
  /** Exact byte length of the zip (entries stored, sizes known). */
  size: number;
  /** The zip, written as it is read (reading starts with the first entry at once). */
  stream: Readable;
}

const KIND_LABEL: Record<ImageKind, string> = {
  ticket: 'ticket image',
  motion: 'motion-capture image',
};

/** Lower-cased UUIDs; a UUID listed twice (in any letter case) is a 400. */
function normalise(uuids: string[]): string[] {
  const seen = new Map<string, number>();
  return uuids.map((u, i) => {
    const id = u.toLowerCase();
    const first = seen.get(id);
    if (first !== undefined)
      throw badRequest(`uuids/${i} repeats uuids/${first}: each UUID may be listed once`, [
        { path: `/uuids/${i}`, message: `repeats /uuids/${first}` },
      ]);
    seen.set(id, i);
    return id;
  });
}

interface ImageRow {
  uuid: string;
  kind: ImageKind;
  site_id: number;
  camera_id: number | null;
  content_type: string;
  sha256: string;
  /** null: the bytes are missing (the foreign key forbids it; answered 500 all the same). */
  size: number | null;
  mtime: Date;
}

/** Checks a request for a bundle of `kind` images; throws the HttpError the contract gives, or returns the bundle. */
export async function prepareBundle(
  db: Queryable,
  access: Access,
  kind: ImageKind,
  requested: string[],
): Promise<Bundle> {
  const entries = await checkImages(db, access, kind, requested);
  return { entries, ...buildZip(db, entries) };
}

/** One image, checked as a bundle of one; its bytes are read while they are sent. */
export async function prepareImage(
  db: Queryable,
  access: Access,
  kind: ImageKind,
  uuid: string,
): Promise<{ entry: BundleEntry; stream: Readable }> {
  const [entry] = await checkImages(db, access, kind, [uuid]);
  return {
    entry,
    stream: Readable.from(readBlob(db, entry.sha256, entry.size), { objectMode: false }),
  };
}

/** The checks of a bundle (400, 404, 403, 500, in that order); the images to send, in request order. */
async function checkImages(
  db: Queryable,
  access: Access,
  kind: ImageKind,
  requested: string[],
): Promise<BundleEntry[]> {
  const uuids = normalise(requested);
  const rows = await db.query<ImageRow>(
    `SELECT i.uuid::text AS uuid, i.kind, i.site_id, i.camera_id, i.content_type, encode(i.sha256, 'hex') AS sha256, b.size,
            coalesce(i.captured_at, i.updated_at) AS mtime
       FROM images i LEFT JOIN image_blobs b ON b.sha256 = i.sha256
      WHERE i.uuid = ANY($1::uuid[])`,
    [uuids],
  );
  const byId = new Map(rows.filter((r) => r.kind === kind).map((r) => [r.uuid, r]));
  const missing = uuids.map((u, i) => ({ u, i })).filter(({ u }) => !byId.has(u));
  if (missing.length)
    throw notFound(
      `no ${KIND_LABEL[kind]} with UUID ${listIds(
        missing.map((m) => m.u),
        3,
      )}`,
      missing
        .slice(0, 20)
        .map(({ i }) => ({ path: `/uuids/${i}`, message: `not a known ${KIND_LABEL[kind]}` })),
    );
  const images = uuids.map((u) => byId.get(u)!);

  const reachable = (r: ImageRow) =>
    access.canReachSite(r.site_id) &&
    (kind !== 'motion' || (r.camera_id !== null && access.canReachCamera(r.camera_id)));
  if (!images.every(reachable))
    throw forbidden(
      `no access to one or more of the requested ${KIND_LABEL[kind]}s${kind === 'motion' ? ' (their site or camera)' : ''}`,
    );

  const intact = await intactDigests(
    db,
    images.map((r) => r.sha256),
  );
  const broken = images.filter((r) => !intact.has(r.sha256));
  if (broken.length) {
    const err = serverError(
      'one or more of the requested images could not be read; nothing was sent',
    );
    Object.assign(err, { unreadable: broken.map((r) => r.uuid) });
    throw err;
  }

  return images.map((r) => ({
    uuid: r.uuid,
    contentType: r.content_type,
    sha256: r.sha256,
    size: r.size!,
    mtime: dosRange(new Date(r.mtime)),
  }));
}

/** `<uuid>.<ext>`: the usual extension of the content type, else its subtype. */
function entryName(uuid: string, contentType: string): string {
  const subtype = contentType.toLowerCase().split('/')[1]?.split(/[;+]/)[0].trim() ?? '';
  const ext =
    EXTENSIONS[subtype] ?? (subtype.replace(/^x-/, '').replace(/[^a-z0-9.-]/g, '') || 'bin');
  return `${uuid}.${ext}`;
}
const EXTENSIONS: Record<string, string> = {
  jpeg: 'jpg',
  jpg: 'jpg',
  pjpeg: 'jpg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
  tiff: 'tif',
  bmp: 'bmp',
  'x-ms-bmp': 'bmp',
  heic: 'heic',
  heif: 'heif',
  avif: 'avif',
  svg: 'svg',
  'x-icon': 'ico',
  'vnd.microsoft.icon': 'ico',
};

/** Zip times hold years 1980 to 2107 only. */
function dosRange(d: Date): Date {
  const min = Date.UTC(1980, 0, 2);
  const max = Date.UTC(2107, 11, 30);
  return new Date(Math.min(max, Math.max(min, d.getTime())));
}

/**
 * The zip of the entries. Each entry's bytes are read from the database only when the zip reaches
 * it; a read that fails (or the wrong number of bytes) destroys the output, so the client sees a
 * broken transfer, never a complete-looking zip with an image missing.
 */
function buildZip(db: Queryable, entries: BundleEntry[]): { size: number; stream: Readable } {
  const zip = new ZipFile();
  const out = zip.outputStream as Readable;
  let current: Readable | undefined;
  const fail = (err: Error) => out.destroy(err);
  zip.on('error', fail);
  // A client that goes away stops the reading (no query is held between slices).
  out.on('close', () => current?.destroy());
  for (const e of entries)
    zip.addReadStreamLazy(
      entryName(e.uuid, e.contentType),
      { size: e.size, compress: false, mtime: e.mtime },
      (cb) => {
        current = Readable.from(readBlob(db, e.sha256, e.size), { objectMode: false });
        current.on('error', fail);
        cb(null, current);
      },
    );
  let size = -1;
  // With every size known and nothing compressed, yazl tells the total at once (a Content-Length).
  (zip.end as (o: object, cb: (total: number) => void) => void)({}, (total) => (size = total));
  if (size < 0) throw new Error('zip size not known in advance');
  return { size, stream: out };
}
