import type { BodyEncoding } from './cache.js';

// Whole-site configuration bodies run to megabytes: sent gzipped to a client that asks for it.

/** Whether an Accept-Encoding header admits gzip (present, and not with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part
      .toLowerCase()
      .split(';')
      .map((x) => x.trim());
    const q = params.find((p) => p.startsWith('q='));
    return coding === 'gzip' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** The encoding of a whole-site body for a request's Accept-Encoding header. */
export const bodyEncoding = (header: string | undefined): BodyEncoding =>
  acceptsGzip(header) ? 'gzip' : 'identity';
