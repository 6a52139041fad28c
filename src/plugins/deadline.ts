import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/index.js';
import { untilDeadline } from '../db/deadline.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How long after its arrival the route answers at the latest; QUERY_TIMEOUT_MS unless it says. */
    answerWithinMs?: number;
  }
  interface FastifyRequest {
    /**
     * The database for this request: until the answer has begun, every call ends by `deadline`
     * (and each within the route's time to answer). Routes use this, never `app.db`.
     */
    db: Database;
    /** Epoch ms by which this request's database work ends: its arrival, plus its route's time to answer, less the answer margin. */
    deadline: number;
  }
}

/** Time kept to send an answer once the database work has been given up: a tenth of the route's time, at most 500 ms. */
export const answerMargin = (ms: number) => Math.min(500, Math.ceil(ms / 10));

/**
 * Gives every request its deadline when it arrives, before anything else (the token's client lookup
 * included) touches the database: a request is answered within its route's time (QUERY_TIMEOUT_MS,
 * uploads WRITE_TIMEOUT_MS) of its arrival, measured from there, not from each call's start.
 */
export function registerRequestDeadlines(
  app: FastifyInstance,
  db: Database,
  queryTimeoutMs: number,
): void {
  app.decorateRequest('db', null as unknown as Database);
  app.decorateRequest('deadline', 0);
  app.addHook('onRequest', (request, reply, done) => {
    const ms = request.routeOptions.config?.answerWithinMs ?? queryTimeoutMs;
    request.deadline = Date.now() + ms - answerMargin(ms);
    request.db = untilDeadline(db, ms, request.deadline, () => reply.raw.headersSent);
    done();
  });
}
