import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, type ErrorDetail } from '../errors.js';
import { detailsOf, type AjvIssue } from './validation-errors.js';

export function errorBody(statusCode: number, message: string, details?: ErrorDetail[]) {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details?.length ? { details } : {}) };
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
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      status = 413;
      message = 'request body is larger than the limit';
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's own client errors: bad JSON, wrong content type, empty body.
      status = err.statusCode;
      message = err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported content type; send application/json' : err.message;
    }
    if (status >= 500) request.log.error({ err }, 'request failed');
    reply.status(status).send(errorBody(status, message, details));
  });
}

/** Unknown routes: a 404 in the same body (set by plugins/rate-limit.ts, so that they are limited too). */
export function answerNotFound(request: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0]}`));
}
