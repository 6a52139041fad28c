import { session, signOut } from './session.js';
import { EXPIRED } from './api.js';
import type { StreamEvents } from './api-schema.js';

// The live stream (GET /v1/stream) read with fetch, because EventSource cannot send the
// Authorization header. Server-Sent Events framing per the HTML standard: fields up to a blank line.
// It reconnects with Last-Event-ID, so nothing committed meanwhile is missed. It is "live" only while
// something (an event or the heartbeat comment) has come within twice the heartbeat's period (the
// Stream-Heartbeat-Ms header): then "stale"; after three periods of silence the connection is taken
// for dead and made again.

/** An event by its name, with its data as the OpenAPI document describes it. */
export type StreamEvent = {
  [E in keyof StreamEvents]: { event: E; data: StreamEvents[E] };
}[keyof StreamEvents];

export type StreamState = 'connecting' | 'live' | 'stale' | 'reconnecting' | 'stopped';

/** The heartbeat's period when the service does not say (its default). */
const HEARTBEAT_MS = 15_000;

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
      // This connection's own abort: the whole stream's, or silence for too long.
      const conn = new AbortController();
      const stop = () => conn.abort();
      ctl.signal.addEventListener('abort', stop);
      let watch: ReturnType<typeof setInterval> | undefined;
      try {
        const headers: Record<string, string> = {
          authorization: `Bearer ${s.token}`,
          accept: 'text/event-stream',
        };
        if (lastId) headers['last-event-id'] = lastId;
        const query = siteIds.length ? `?siteIds=${siteIds.join(',')}` : '';
        const res = await fetch(`/v1/stream${query}`, {
          headers,
          signal: conn.signal,
          cache: 'no-store',
        });
        if (res.status === 401) {
          signOut(EXPIRED);
          break;
        }
        if (!res.ok || !res.body) throw new Error(String(res.status));
        const beat = Number(res.headers.get('stream-heartbeat-ms')) || HEARTBEAT_MS;
        let heard = Date.now();
        let state = 'live' as StreamState;
        onState(state);
        watch = setInterval(
          () => {
            const quiet = Date.now() - heard;
            if (quiet > 3 * beat) conn.abort();
            else if (quiet > 2 * beat && state === 'live') onState((state = 'stale'));
          },
          Math.min(1000, beat / 2),
        );
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          heard = Date.now();
          if (state === 'stale') onState((state = 'live'));
          buffer += value;
          const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
          buffer = blocks.pop() ?? '';
          blocks.forEach(dispatch);
        }
      } catch {
        if (ctl.signal.aborted) break;
      } finally {
        clearInterval(watch);
        ctl.signal.removeEventListener('abort', stop);
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
