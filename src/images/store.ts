import { createHash } from 'node:crypto';
import type { Queryable } from '../db/index.js';

// Image bytes live in PostgreSQL, content-addressed: image_blobs is keyed by the SHA-256 of the
// bytes, images point at it. Blobs never change once written (same key, same bytes), so a digest
// read once stays valid; only a blob nobody references any more is deleted.

/** Bytes per read: a larger image is streamed in slices of this size, never loaded whole. */
const SLICE_BYTES = 1024 * 1024;

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
    const rows = await db.query<{ chunk: string }>(
      `SELECT encode(substring(data FROM $2 FOR $3), 'base64') AS chunk FROM image_blobs WHERE sha256 = decode($1, 'hex')`,
      [digest, from + 1, sliceBytes],
    );
    if (!rows.length) throw new Error(`image bytes ${digest} disappeared while being sent`);
    const chunk = Buffer.from(rows[0].chunk, 'base64');
    if (!chunk.length) throw new Error(`image bytes ${digest} end at ${from} of ${size}`);
    yield chunk;
  }
}
