import type { FastifyError, FastifyInstance } from 'fastify';
import { errorBody, HttpError, UNSTORED, type ErrorDetail } from '../errors.js';
import { detailsOf, type AjvIssue } from '../schemas/validation-errors.js';
import { isDatabaseUnavailable, isOutOfTime } from '../db/deadline.js';

export { errorBody };

/** Seconds a client is asked to wait before it tries a 503 again. */
export const RETRY_AFTER_S = 5;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The status of a request the database could not serve: 503 (with retry-after) unless a route says 500 (uploads: "could not be stored"). */
    whenUnavailable?: 500 | 503;
  }
}

/** The one place that turns errors into the contract's error body; 5xx never show their cause. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validationContext?: string }, request, reply) => {
    let status = 500;
    let message = 'internal server error';
    let details: ErrorDetail[] | undefined;
    if (err instanceof HttpError) {
      status = err.statusCode;
      message = err.message;
      details = err.details;
    } else if (err.validation) {
      status = 400;
      details = detailsOf(err.validation as AjvIssue[], err.validationContext);
      message = `validation failed: ${details[0]?.message ?? 'invalid request'}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}`;
    } else if (isDatabaseUnavailable(err)) {
      // Unreachable, stuck or locked: the request was given up within its deadline, and may be sent again.
      status = request.routeOptions.config?.whenUnavailable ?? 503;
      message =
        status !== 503
          ? UNSTORED
          : isOutOfTime(err)
            ? 'the request did not finish in time (QUERY_TIMEOUT_MS); ask for a shorter range, or try again shortly'
            : 'the database is unavailable; try again shortly';
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      status = 413;
      message = 'request body is larger than the limit';
    } else if (
      typeof err.statusCode === 'number' &&
      err.statusCode >= 400 &&
      err.statusCode < 500
    ) {
      // Fastify's own client errors: bad JSON, wrong content type, empty body.
      status = err.statusCode;
      message =
        err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'unsupported content type; send application/json'
          : err.message;
    }
    if (status === 503) {
      if (!reply.hasHeader('retry-after')) reply.header('retry-after', String(RETRY_AFTER_S));
      request.log.warn({ err: err.message }, 'request answered 503');
    } else if (status >= 500) request.log.error({ err }, 'request failed');
    reply.status(status).send(errorBody(status, message, details));
  });
}
