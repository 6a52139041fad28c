import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';
import { badTextAt } from '../text.js';
import { bodyValidator, textValidator } from '../schemas/validator.js';

/** Every route's schemas are compiled by the service's one validator (schemas/validator.ts). */
export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyValidator : textValidator).compile(schema),
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
