import type { FastifyReply } from 'fastify';
import type { Sink } from './subscriber.js';

/** A subscriber's connection through @fastify/sse (which frames each event and sends the headers first). */
export function sseSink(reply: FastifyReply): Sink {
  const raw = reply.raw;
  return {
    write(frame) {
      // Writes at once (before its first await); its promise only tells when the buffer drained.
      void reply.sse.send(frame).catch(() => {});
      return !raw.writableNeedDrain;
    },
    buffered: () => raw.writableLength,
    onDrain: (fn) => raw.once('drain', fn),
    open: () => reply.sse.sendHeaders(),
    opened: () => raw.headersSent,
    onClose: (fn) => reply.sse.onClose(fn),
    cork: () => raw.cork(),
    uncork: () => raw.uncork(),
    end: () => reply.sse.close(),
  };
}
