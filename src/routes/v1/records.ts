import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  MEDIA_TYPE,
  negotiateFormat,
  recordsBody,
  type Format,
  type Page,
} from '../../export/records.js';

// The answer of the download routes: pages of records as JSON or CSV (src/export/records.ts).

/** The format of an answer, and whether the request's Accept header chose it. */
export interface Answer {
  format: Format;
  negotiated: boolean;
}

/** JSON, or CSV when the request's Accept header prefers it. */
export const negotiate = (request: FastifyRequest): Answer => ({
  format: negotiateFormat(request.headers.accept),
  negotiated: true,
});

/** JSON whatever the Accept header says. */
export const JSON_ONLY: Answer = { format: 'json', negotiated: false };

/**
 * Sends the records, the first page read before the status is sent (see recordsBody). An answer
 * whose format the Accept header chose says so (Vary: accept), so that no cache hands the CSV
 * asked for by one client to another that asked for JSON.
 */
export async function sendRecords(
  reply: FastifyReply,
  answer: Answer,
  fields: readonly string[],
  pages: AsyncIterator<Page>,
): Promise<FastifyReply> {
  const body = await recordsBody(answer.format, fields, pages);
  reply.type(MEDIA_TYPE[answer.format]);
  if (answer.negotiated) reply.header('vary', 'accept');
  return reply.send(body);
}
