import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import { errorBody } from '../errors.js';

// Answers given before any route or hook runs: the router's (a path parameter too long, a path
// that is not valid percent-encoding) and Node's HTTP parser's (headers too large, a request not
// received in time, bytes that are not HTTP). Fastify's own answers to these add a `code` key and
// repeat the path; these are in the contract's error body, with messages that repeat nothing.

/** The longest path parameter the router takes (Fastify's default); a longer one is a 414. */
export const MAX_PARAM_LENGTH = 100;

/** The router's errors (Fastify's frameworkErrors option), as the error body. */
export function answerFrameworkError(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  let status = 500;
  let message = 'internal server error';
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    status = 414;
    message = `a part of the request's path is too long (at most ${MAX_PARAM_LENGTH} characters between slashes)`;
  } else if (err.code === 'FST_ERR_BAD_URL') {
    status = 400;
    message = "the request's path is not valid percent-encoding";
  } else request.log.error({ err }, 'request failed');
  reply.status(status).send(errorBody(status, message));
}

/** Sockets already answered: a broken parser reports every later chunk again. */
const answered = new WeakSet<Socket>();

/**
 * Node's HTTP parser errors (Fastify's clientErrorHandler option): the error body with
 * `Connection: close`, then the socket is closed once the answer is sent, so that a client never
 * sends a next request on a connection the server is about to drop.
 */
export function clientErrorAnswers(limits: {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}): NonNullable<FastifyServerOptions['clientErrorHandler']> {
  return function answerClientError(this: FastifyInstance, err, socket) {
    // A reset connection, or one already answered: nothing more to say on it.
    if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    // Mostly the network or a balancer, not the service: logged as Fastify does, at trace.
    this.log.trace({ err }, 'client error');
    // An answer already under way on this socket cannot be followed by another: only close.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    let status = 400;
    let message = 'the request is not valid HTTP';
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      message = `the request was not received in time (headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms)`;
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      message = `the request's line and headers are larger than ${maxHeaderSize} bytes`;
    } else if (err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
      status = 413;
      message = 'the chunk extensions of the request body are too large';
    }
    const body = JSON.stringify(errorBody(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  };
}
