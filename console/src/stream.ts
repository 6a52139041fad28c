import { session, signOut } from './session.js';
import { EXPIRED } from './api.js';
import type { StreamEvents } from './api-schema.js';

// The live stream (GET /v1/stream) read with fetch, because EventSource cannot send the
// Authorization header. Server-Sent Events framing per the HTML standard: fields up to a blank line.
// It reconnects with Last-Event-ID, so nothing committed meanwhile is missed.

/** An event by its name, with its data as the OpenAPI document describes it. */
export type StreamEvent = {
  [E in keyof StreamEvents]: { event: E; data: StreamEvents[E] };
}[keyof StreamEvents];

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'stopped';

/** Follows the given sites (every site of the client when `siteIds` is empty). */
export function openStream(
  siteIds: number[],
  onEvent: (e: StreamEvent) => void,
  onState: (s: StreamState) => void,
): () => void {
  const ctl = new AbortController();
  let lastId: string | undefined;
  let retryMs = 1000;

  const dispatch = (block: string) => {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (!line || line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') lastId = value;
      else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
    }
    if (!data.length) return;
    try {
      onEvent({ event, data: JSON.parse(data.join('\n')) } as StreamEvent);
    } catch {
      /* a malformed event is skipped, the stream goes on */
    }
  };

  const run = async () => {
    while (!ctl.signal.aborted) {
      const s = session();
      if (!s) break;
      try {
        const headers: Record<string, string> = {
          authorization: `Bearer ${s.token}`,
          accept: 'text/event-stream',
        };
        if (lastId) headers['last-event-id'] = lastId;
        const query = siteIds.length ? `?siteIds=${siteIds.join(',')}` : '';
        const res = await fetch(`/v1/stream${query}`, {
          headers,
          signal: ctl.signal,
          cache: 'no-store',
        });
        if (res.status === 401) {
          signOut(EXPIRED);
          break;
        }
        if (!res.ok || !res.body) throw new Error(String(res.status));
        onState('live');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
          buffer = blocks.pop() ?? '';
          blocks.forEach(dispatch);
        }
      } catch {
        if (ctl.signal.aborted) break;
      }
      onState('reconnecting');
      await new Promise((r) => setTimeout(r, Math.max(500, retryMs)));
    }
    onState('stopped');
  };
  onState('connecting');
  void run();
  return () => ctl.abort();
}
