import { isUtf8 } from 'node:buffer';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';
import { badTextAt } from '../text.js';

/**
 * Query strings and path parameters arrive as text and are coerced to their schema's types;
 * bodies are JSON and checked strictly ("12" is not a number). Unknown body properties are dropped.
 */
export function registerValidation(app: FastifyInstance): void {
  const make = (coerce: boolean) => {
    // verbose: errors carry their schema, whose description says what a pattern means (plugins/validation-errors.ts).
    const ajv = new Ajv({
      coerceTypes: coerce ? 'array' : false,
      useDefaults: true,
      removeAdditional: true,
      allErrors: false,
      strict: false,
      verbose: true,
    });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    return ajv;
  };
  const strict = make(false);
  const coercing = make(true);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema),
  );
  // Bodies are JSON only: without Fastify's text/plain parser every other media type answers 415 alike.
  app.removeContentTypeParser('text/plain');
  rejectBadText(app);
}

// Text must reach the database as sent (src/text.ts): NUL, lone surrogates and bytes that are not
// UTF-8 are refused where text enters (query string, path, JSON body), once for every route, as a 400.
const NUL_IN_URL = /%00/;
// Only a body that mentions an escaped NUL or surrogate is searched value by value.
const SUSPECT_ESCAPE = /\\u(?:0000|d[89a-f])/i;

function rejectBadText(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (NUL_IN_URL.test(request.url))
      throw badRequest('the request URL holds a NUL character (%00)', [
        { path: '/', message: 'NUL is not allowed' },
      ]);
  });
  // Fastify's own parser (it refuses __proto__ and constructor poisoning), after the UTF-8 check.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    const bytes = raw as Buffer;
    if (!isUtf8(bytes))
      return done(
        badRequest('the body is not valid UTF-8', [{ path: '/', message: 'not valid UTF-8' }]),
        undefined,
      );
    const text = bytes.toString('utf8');
    // Fastify's default JSON parser answers through the callback (it returns nothing to await).
    void parse(request, text, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      const bad = SUSPECT_ESCAPE.test(text) ? badTextAt(value) : undefined;
      if (bad)
        return done(
          badRequest(`${bad.path || '/'}: ${bad.message}`, [
            { path: bad.path || '/', message: bad.message },
          ]),
          undefined,
        );
      done(null, value);
    });
  });
}
