import { PassThrough, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { HttpError, badRequest } from '../errors.js';

// Request bodies compressed with gzip, deflate or br (gateways on metered links compress them).
// BODY_LIMIT applies to the decompressed bytes, and decompression stops as soon as they pass it:
// a small body that would inflate to gigabytes costs the server at most BODY_LIMIT bytes of work.
// (@fastify/compress's request decompression is not used: when Fastify's body limit stops reading,
// its decompressor keeps inflating the rest of the body into nothing.)

const DECODERS: Record<string, () => Gunzip | ReturnType<typeof createBrotliDecompress>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The stream Fastify reads a body from; it compares receivedEncodedLength with Content-Length. */
type BodyStream = PassThrough & { receivedEncodedLength: number };

const hasBody = (headers: Record<string, unknown>) =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

export function registerDecompression(app: FastifyInstance, limit: number): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const header = request.headers['content-encoding'];
    if (header === undefined || !hasBody(request.headers)) return payload;
    const coding = header.trim().toLowerCase();
    if (coding === '' || coding === 'identity') return payload;
    const make = DECODERS[coding];
    if (!make) {
      const shown = coding.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
      throw new HttpError(
        415,
        `unsupported Content-Encoding '${shown}': send gzip, deflate, br or none`,
        [{ path: '/', message: 'Content-Encoding must be gzip, deflate, br or identity' }],
      );
    }
    // The route's own limit when it has one (the same number today: every route takes BODY_LIMIT).
    return decodeBody(payload, make(), coding, request.routeOptions.bodyLimit ?? limit, () =>
      reply.header('connection', 'close'),
    );
  });
}

/**
 * The decompressed body of `raw`, failing with 413 once it passes `limit` bytes (the decoder is
 * destroyed and `raw` is no longer read) and with 400 when the bytes are not valid `coding` data.
 */
function decodeBody(
  raw: Readable,
  decoder: Gunzip | ReturnType<typeof createBrotliDecompress>,
  coding: string,
  limit: number,
  onStop = () => {},
): BodyStream {
  const out = new PassThrough() as BodyStream;
  out.receivedEncodedLength = 0;
  // Whoever reads the body listens for errors; this keeps an unread body's error from crashing the process.
  out.on('error', () => {});
  let decoded = 0;
  let stopped = false;
  const countEncoded = (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  };
  const stop = (err: Error) => {
    if (stopped) return;
    stopped = true;
    raw.removeListener('data', countEncoded);
    raw.unpipe(decoder);
    raw.pause();
    decoder.destroy();
    onStop();
    out.destroy(err);
  };
  raw.on('data', countEncoded);
  raw.on('error', (err) => stop(err));
  decoder.on('data', (chunk: Buffer) => {
    if (stopped) return;
    decoded += chunk.length;
    if (decoded > limit)
      return stop(
        new HttpError(
          413,
          `request body is larger than the limit (${limit} bytes once decompressed)`,
        ),
      );
    if (!out.write(chunk)) decoder.pause();
  });
  out.on('drain', () => decoder.resume());
  decoder.on('end', () => {
    if (!stopped) out.end();
  });
  decoder.on('error', () =>
    stop(
      badRequest(`the body is not valid ${coding} data`, [
        { path: '/', message: `not valid ${coding} data` },
      ]),
    ),
  );
  raw.pipe(decoder);
  return out;
}
