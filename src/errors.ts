import { STATUS_CODES } from 'node:http';

// Typed errors carry their HTTP status; the one error handler (plugins/errors.ts) shapes the body.
export interface ErrorDetail {
  path: string;
  message: string;
}

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) =>
  new HttpError(400, message, details);
/** A 400 for one field of a body: `path` is its JSON pointer, `problem` what is wrong ("is required"). */
export function invalidField(path: string, problem: string): HttpError {
  const message = `${path} ${problem}`;
  return badRequest(`validation failed: ${message}`, [{ path, message }]);
}

export const unauthorized = (message = 'missing or invalid bearer token') =>
  new HttpError(401, message);
export const forbidden = (message: string) => new HttpError(403, message);
export const notFound = (message: string, details?: ErrorDetail[]) =>
  new HttpError(404, message, details);
export const serverError = (message: string) => new HttpError(500, message);

/** Why an upload the database could not store is answered 500 (writer and error handler alike). */
export const UNSTORED =
  'the database could not store the upload; nothing of it is acknowledged, send it again';

/** Ids for a message, bounded: at most `max` named, then "and N more". */
export function listIds(ids: readonly (number | string)[], max = 5): string {
  const named = ids.slice(0, max).join(', ');
  return ids.length > max ? `${named} and ${ids.length - max} more` : named;
}

/** The contract's error body (section 1) of a status: every 4xx and 5xx answer, and MQTT responses. */
export function errorBody(statusCode: number, message: string, details?: ErrorDetail[]) {
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    ...(details?.length ? { details } : {}),
  };
}
