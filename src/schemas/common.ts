import { Type, type TSchema } from '@sinclair/typebox';

// Pieces every area shares: ids, times, the error body, the pagination envelope.

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A 64-bit id on output: always a JSON string. */
export const BigIdString = Type.String({
  pattern: '^-?[0-9]{1,19}$',
  description: '64-bit integer as a string',
});
/** A 64-bit id on input: string or integer, positive (at most 19 digits, leading zeros aside). */
export const BigIdInput = Type.Union(
  [
    Type.String({
      pattern: '^(?=[0-9]{1,19}$)0*[1-9][0-9]*$',
      description: 'a positive 64-bit integer as a string',
    }),
    Type.Integer({ minimum: 1 }),
  ],
  { description: 'a positive 64-bit integer, as a string or an integer' },
);

/**
 * The largest measured value taken, in absolute value. JSON allows 1e999 (Infinity once parsed) and
 * 1e308 (whose sums overflow); within this bound no sum, mean or time integral of accepted values
 * can overflow a double, so a summary of stored values always has an answer.
 */
export const MEASURED_MAX = 1e15;

/** A measured value: finite and at most MEASURED_MAX in absolute value. */
export const Measured = Type.Number({
  minimum: -MEASURED_MAX,
  maximum: MEASURED_MAX,
  description: 'a measured value, at most 1e15 in absolute value',
});

/** ISO 8601 date-time; without an offset it is UTC. Parsed and range-checked by parseTime. */
export const DateTimeInput = Type.String({
  minLength: 10,
  maxLength: 40,
  description:
    'ISO 8601 date-time with a time of day; no offset means UTC. A date alone, hour 24, second 60 or a day the month lacks is a 400',
});
export const DateTimeOutput = Type.String({
  format: 'date-time',
  description: 'UTC, with milliseconds',
});

/** An id: a positive 32-bit integer (in a path or query, given as a string). */
export const IntId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const ErrorDetail = Type.Object({ path: Type.String(), message: Type.String() });
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Array(ErrorDetail)),
  },
  { $id: 'ErrorBody', title: 'Error body' },
);
const ErrorRef = Type.Ref('ErrorBody');

const ERROR_TEXT: Record<number, string> = {
  400: 'Validation failed',
  401: 'Missing, expired or invalid bearer token',
  403: 'Caller lacks permission for a requested site or equipment, or its role does not allow the operation',
  404: 'Not found',
  405: 'Method not allowed on this path (the Allow header lists the methods it takes)',
  409: 'Conflicts with what exists',
  413: 'Request body too large',
  415: 'Body is not JSON (send application/json)',
  429: 'Rate limit exceeded',
  500: 'Could not be completed',
  503: 'The database is unavailable or did not answer in time: nothing was changed; try again after retry-after seconds',
};

/** Response schemas for the given error statuses, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses)
    out[s] = { ...ErrorRef, description: ERROR_TEXT[s] ?? 'Error' } as TSchema;
  return out;
}

/** Statuses every /v1 route can answer (uploads answer 500 where others answer 503: they leave 503 out). */
export const securedErrors = (...more: number[]) => errorResponses(400, 401, 429, 503, ...more);

export function Paginated<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      page: Type.Integer(),
      perPage: Type.Integer(),
      total: Type.Integer(),
      totalPages: Type.Integer(),
    },
    { title },
  );
}
