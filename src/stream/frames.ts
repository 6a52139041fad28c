// The text of the stream. Framing is done here rather than per message by @fastify/sse: an event
// is framed once and the same text goes to every subscriber (with its own id line), and a
// subscriber's pending events go out in one write. Data is JSON, one line; a line break (never in
// what the writers make) would still be framed as several data lines.

/** One SSE event (`retry` tells the client how long to wait before reconnecting). */
export function frame(id: string, event: string, data: string, retry?: number): string {
  return `id: ${id}${tail(event, data, retry)}`;
}

/** What follows the id line: the same for every subscriber of an event. */
export function tail(event: string, data: string, retry?: number): string {
  const lines = data.includes('\n') ? data.split(/\r?\n/).join('\ndata: ') : data;
  return `\nevent: ${event}\n${retry ? `retry: ${retry}\n` : ''}data: ${lines}\n\n`;
}

/**
 * An id is a cursor, then "-" and a tag of the streamed sites: a position is only worth resuming for
 * the same sites (a reconnection for other sites, or after the client's sites changed, gets a snapshot).
 */
export function siteTag(sites: number[] | null): string {
  const text = sites ? [...sites].sort((a, b) => a - b).join(',') : '*';
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

/** The cursor text of an id sent for these sites, or undefined. */
export function cursorOf(id: string | undefined, sites: number[] | null): string | undefined {
  const dash = id?.lastIndexOf('-') ?? -1;
  return dash > 0 && id!.slice(dash + 1) === siteTag(sites) ? id!.slice(0, dash) : undefined;
}
