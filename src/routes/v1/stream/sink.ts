import type { FastifyReply } from 'fastify';
import type { Sink } from '../../../stream/subscriber.js';

/**
 * A subscriber's connection. @fastify/sse sends the response head (its SSE headers, and those set
 * on the reply before), sends the heartbeat comment and tells when the connection closes; the
 * events themselves are text framed once per event (frames.ts), written here.
 */
export function sseSink(reply: FastifyReply): Sink {
  const raw = reply.raw;
  return {
    write(text) {
      reply.sse.sendHeaders();
      return raw.write(text);
    },
    buffered: () => raw.writableLength,
    onDrain: (fn) => raw.once('drain', fn),
    open: () => reply.sse.sendHeaders(),
    opened: () => raw.headersSent,
    onClose: (fn) => reply.sse.onClose(fn),
    end: () => reply.sse.close(),
  };
}
