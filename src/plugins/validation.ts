import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Query strings and path parameters arrive as text and are coerced to their schema's types;
 * bodies are JSON and checked strictly ("12" is not a number). Unknown body properties are dropped.
 */
export function registerValidation(app: FastifyInstance): void {
  const make = (coerce: boolean) => {
    const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: true, allErrors: false, strict: false });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    return ajv;
  };
  const strict = make(false);
  const coercing = make(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
