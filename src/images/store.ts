import { createHash } from 'node:crypto';
import type { Queryable } from '../db/index.js';

// Image bytes live in PostgreSQL, content-addressed: image_blobs is keyed by the SHA-256 of the
// bytes, images point at it. Blobs never change once written (same key, same bytes), so a digest
// read once stays valid; only a blob nobody references any more is deleted.

/**
 * Bytes per read: a larger image is streamed in slices of this size, never loaded whole. 64 KiB: the
 * slice's base64 text (87 KB) stays under V8's 128 KB limit for objects of the young generation's
 * ordinary pages, and pg assembles the row in a receive buffer of 128 KB (twice its 64 KB socket
 * read); a 1 MiB slice of a 200 KB image took 768 KB of receive buffers (256 and 512 KB), and of a
 * large image a 1.4 MB text and a 2 MB buffer per slice. Measured on a bundle of 200 × 200 KB
 * (bench/images.ts' load, 3 runs each, twice): resident memory grew 29 to 32 MB at the first bundle
 * and at most 1.3 MB at the later ones, against 35 to 36 MB and 2 to 5 MB with 1 MiB slices.
 */
const SLICE_BYTES = 64 * 1024;

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Bytes cross the driver as base64 text: PGlite encodes bytea parameters and results byte by byte in
// JavaScript (2.5 MB: 3 s in, 0.6 s out; as base64 0.1 s and 0.02 s), and on node-postgres base64 is
// smaller on the wire than bytea's hex text.

/** Digests of the given hex list that are stored. */
async function storedDigests(db: Queryable, digests: string[]): Promise<Set<string>> {
  const rows = await db.query<{ sha256: string }>(
    `SELECT encode(sha256, 'hex') AS sha256 FROM image_blobs WHERE sha256 = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)`,
    [[...new Set(digests)]],
  );
  return new Set(rows.map((r) => r.sha256));
}

/**
 * Stores each image's bytes (given as base64) once, not sending bytes already stored, and returns
 * their hex digests in input order. One decoded image is held at a time.
 */
export async function storeBlobs(db: Queryable, base64: string[]): Promise<string[]> {
  const digests = base64.map((b) => sha256Hex(Buffer.from(b, 'base64')));
  const have = await storedDigests(db, digests);
  for (let i = 0; i < base64.length; i++) {
    if (have.has(digests[i])) continue;
    // Another import (this or another instance) may store the same bytes at the same time: either wins.
    await db.query(
      `INSERT INTO image_blobs (sha256, size, data) SELECT decode($1, 'hex'), octet_length(x.d), x.d FROM (SELECT decode($2, 'base64') AS d) x
       ON CONFLICT DO NOTHING`,
      [digests[i], base64[i]],
    );
    have.add(digests[i]);
  }
  return digests;
}

/** Deletes those of the given blobs that no image references any more (after images were re-pointed). */
export async function dropUnusedBlobs(db: Queryable, digests: string[]): Promise<void> {
  if (!digests.length) return;
  await db.query(
    `DELETE FROM image_blobs b WHERE b.sha256 = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)
       AND NOT EXISTS (SELECT 1 FROM images i WHERE i.sha256 = b.sha256)`,
    [[...new Set(digests)]],
  );
}

/**
 * Of the given digests, those whose stored bytes are complete and still hash to their key. The
 * hashing runs inside the database, so checking a large bundle costs the server no memory.
 */
export async function intactDigests(db: Queryable, digests: string[]): Promise<Set<string>> {
  const rows = await db.query<{ sha256: string }>(
    `SELECT encode(sha256, 'hex') AS sha256 FROM image_blobs
      WHERE sha256 = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)
        AND octet_length(data) = size AND sha256(data) = sha256`,
    [[...new Set(digests)]],
  );
  return new Set(rows.map((r) => r.sha256));
}

/** The stored bytes of one blob, a slice per query (no connection is held between slices). */
export async function* readBlob(
  db: Queryable,
  digest: string,
  size: number,
  sliceBytes = SLICE_BYTES,
): AsyncGenerator<Buffer> {
  for (let from = 0; from < size; from += sliceBytes) {
    const chunk = await readSlice(db, digest, from, sliceBytes);
    if (!chunk.length) throw new Error(`image bytes ${digest} end at ${from} of ${size}`);
    yield chunk;
  }
}

/**
 * One slice as bytes. Its base64 text is dropped here, before the bytes are handed on: the generator
 * above waits at `yield` for as long as the slice takes to be sent, and a text it still held then
 * would live through the young-generation collections of that time (text over 128 KB is promoted
 * to V8's large-object space on the first one it survives, freed only by a full collection).
 */
async function readSlice(db: Queryable, digest: string, from: number, bytes: number) {
  const rows = await db.query<{ chunk: string }>(
    `SELECT encode(substring(data FROM $2 FOR $3), 'base64') AS chunk FROM image_blobs WHERE sha256 = decode($1, 'hex')`,
    [digest, from + 1, bytes],
  );
  if (!rows.length) throw new Error(`image bytes ${digest} disappeared while being sent`);
  return Buffer.from(rows[0].chunk, 'base64');
}
