import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest } from '../errors.js';
import { detailsOf, type AjvIssue } from './validation-errors.js';

// The one validator of the service. Query strings and path parameters arrive as text and are
// coerced to their schema's types; bodies are JSON and checked strictly ("12" is not a number).
// Unknown body properties are dropped. Routes compile their schemas here (plugins/validation.ts),
// and so do engines that check a part of a body only once they know its shape (a generic upload's
// records, routed by their id field).

function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry their schema, whose description says what a pattern means (validation-errors.ts).
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
}

/** Bodies: strict types. */
export const bodyValidator = makeAjv(false);
/** Query strings, path parameters and headers: text coerced to the schema's types. */
export const textValidator = makeAjv(true);

/**
 * Checks `value` against a compiled body schema; a failure is the same 400 a route's own body
 * validation answers, its details' pointers prefixed with `at` (where the value sits in the body).
 */
export function checkBody(validate: ValidateFunction, value: unknown, at: string): void {
  if (validate(value)) return;
  const details = detailsOf(validate.errors as AjvIssue[], 'body').map((d) => {
    // detailsOf names the field by its pointer, or "the body" for the whole value (path '/').
    const field = d.path === '/' ? '' : d.path;
    const path = `${at}${field}`;
    return path ? { path, message: `${path}${d.message.slice((field || 'the body').length)}` } : d;
  });
  throw badRequest(
    `validation failed: ${details[0]?.message ?? 'invalid request'}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}`,
    details,
  );
}
