import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';

/**
 * Query strings and path parameters arrive as text and are coerced to their schema's types;
 * bodies are JSON and checked strictly ("12" is not a number). Unknown body properties are dropped.
 */
export function registerValidation(app: FastifyInstance): void {
  const make = (coerce: boolean) => {
    // verbose: errors carry their schema, whose description says what a pattern means (plugins/validation-errors.ts).
    const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: true, allErrors: false, strict: false, verbose: true });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    return ajv;
  };
  const strict = make(false);
  const coercing = make(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
  // Bodies are JSON only: without Fastify's text/plain parser every other media type answers 415 alike.
  app.removeContentTypeParser('text/plain');
  rejectNulCharacters(app);
}

// PostgreSQL text cannot hold U+0000: refuse it where text enters (query string, path, JSON body),
// once for every route, so it is a 400 rather than a database error.
const NUL_IN_URL = /%00/;
const NUL_IN_JSON = /\\u0000/i;

function rejectNulCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (NUL_IN_URL.test(request.url)) throw badRequest('the request URL holds a NUL character (%00)', [{ path: '/', message: 'NUL is not allowed' }]);
  });
  // Fastify's own parser (it refuses __proto__ and constructor poisoning), then the NUL check.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      // Cheap test first; only a body that mentions \\u0000 is searched value by value.
      const at = NUL_IN_JSON.test(body as string) ? nulPath(value, '') : undefined;
      if (at !== undefined) return done(badRequest(`${at || '/'} holds a NUL character (\\u0000)`, [{ path: at || '/', message: 'NUL is not allowed' }]), undefined);
      done(null, value);
    });
  });
}

/** JSON pointer of the first string (or key) holding U+0000, or undefined. */
function nulPath(v: unknown, at: string): string | undefined {
  if (typeof v === 'string') return v.includes('\u0000') ? at : undefined;
  if (v === null || typeof v !== 'object') return undefined;
  for (const [k, x] of Object.entries(v)) {
    const here = `${at}/${k}`;
    if (k.includes('\u0000')) return here;
    const found = nulPath(x, here);
    if (found !== undefined) return found;
  }
  return undefined;
}
