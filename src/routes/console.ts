import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyTypebox } from '../http.js';
import { HttpError, notFound } from '../errors.js';

// The operator console: a single-page application built from console/ into dist/console (npm run
// build). Its hashed assets are cached for good; every other path under /console/ that is not a file
// is one of the application's own pages (a bookmark such as /console/sites/3) and gets index.html.

/**
 * The page may load only its own files and call only this service; images come from blob: URLs
 * (fetched with the token); it cannot be framed by another site.
 */
const CSP =
  "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Where `npm run build` puts the console, the same from src/ (tsx) and from dist/ (compiled). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));

function listFiles(dir: string): Set<string> {
  if (!existsSync(dir)) return new Set();
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && !/\.(gz|br)$/.test(e.name),
  );
  return new Set(files.map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/')));
}

export async function consoleRoutes(app: FastifyTypebox, opts: { dir?: string }): Promise<void> {
  const dir = opts.dir ?? CONSOLE_DIR;
  // Listed once: the build is not changed under a running service (restart it after npm run build).
  const files = listFiles(dir);
  // The build writes a .gz beside each text asset; a browser that accepts gzip gets those bytes.
  if (files.size)
    await app.register(fastifyStatic, {
      root: dir,
      serve: false,
      preCompressed: true,
      index: false,
      cacheControl: false,
    });

  app.get('/', { schema: { hide: true } }, redirectToConsole);
  // '/console' too: with trailing slashes ignored, /console/ reaches that route, not the wildcard.
  app.get('/console', { schema: { hide: true } }, sendConsolePage);
  app.get('/console/*', { schema: { hide: true } }, sendConsoleFile);

  async function redirectToConsole(_request: FastifyRequest, reply: FastifyReply) {
    return reply.redirect('/console/');
  }

  /** A built file as itself; any other path is one of the application's pages. */
  async function sendConsoleFile(
    request: FastifyRequest<{ Params: { '*'?: string } }>,
    reply: FastifyReply,
  ) {
    const path = request.params['*'] ?? '';
    if (files.has(path)) {
      reply.header(
        'cache-control',
        path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      return reply.sendFile(path);
    }
    // A missing script or image is a 404, never the page in its place.
    if (/\.[a-z0-9]{1,8}$/i.test(path))
      throw notFound(`no file ${path.slice(0, 200)} in the console`);
    return sendConsolePage(request, reply);
  }

  /** index.html, which shows the page the path names. */
  async function sendConsolePage(_request: FastifyRequest, reply: FastifyReply) {
    if (!files.has('index.html'))
      throw new HttpError(503, 'the console is not built: run npm run build');
    reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .header('referrer-policy', 'no-referrer');
    return reply.sendFile('index.html');
  }
}
