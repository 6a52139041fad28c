// Clients of test/operations/haproxy.test.ts, as they would be written against a balanced service:
// an upload client that retries what got no answer, and a live-stream client on fetch that
// reconnects with Last-Event-ID wherever the balancer sends it.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: any;
  servedBy: string | null;
  /** Requests made: 1 + retries. */
  attempts: number;
  /** What each retried attempt got: a status, or the network error. */
  failures: string[];
}

/** No answer to rely on: the connection failed, the balancer found no instance, or nothing was stored. */
const RETRIED = new Set([500, 502, 503, 504]);

/**
 * POSTs JSON until it gets an answer other than a failure: what an edge gateway does with an
 * upload (uploads are idempotent, so a replay of one that was stored is a duplicate).
 */
export async function postWithRetry(
  url: string,
  /** The bearer token ('' for none). */
  token: string,
  body: unknown,
  { deadlineMs = 20_000, pauseMs = 100 } = {},
): Promise<Answer> {
  const end = Date.now() + deadlineMs;
  const failures: string[] = [];
  for (;;) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (!RETRIED.has(res.status))
        return {
          status: res.status,
          body: text ? JSON.parse(text) : undefined,
          servedBy: res.headers.get('x-served-by'),
          attempts: failures.length + 1,
          failures,
        };
      failures.push(String(res.status));
    } catch (err) {
      failures.push((err as Error).cause ? String((err as Error).cause) : String(err));
    }
    if (Date.now() > end) throw new Error(`no answer from ${url} in ${deadlineMs} ms: ${failures}`);
    await sleep(pauseMs);
  }
}

export interface StreamEvent {
  type: string;
  id: string;
  data: any;
  /** Index of the connection it came on. */
  connection: number;
  at: number;
}

export interface StreamConnection {
  /** When the request was sent, and when its response ended (or failed). */
  at: number;
  ended?: number;
  /** The Last-Event-ID it carried. */
  lastEventId: string | null;
  status?: number;
  servedBy?: string | null;
  error?: string;
}

export interface FollowedStream {
  events: StreamEvent[];
  connections: StreamConnection[];
  /** The first event from index `from` on that matches, waiting up to ms for it. */
  next(
    match: (e: StreamEvent) => boolean,
    opts?: { from?: number; ms?: number },
  ): Promise<StreamEvent>;
  close(): void;
}

/**
 * A live-stream client on fetch (the token goes in the Authorization header), as a dashboard would
 * write one: it reads Server-Sent Events, and whenever its response ends, fails or is refused, it
 * waits the `retry` the server gave and asks again with the id of the last event it received.
 */
export function followStream(
  base: string,
  token: string,
  query: string,
  opts: { lastEventId?: string } = {},
): FollowedStream {
  const events: StreamEvent[] = [];
  const connections: StreamConnection[] = [];
  const abort = new AbortController();
  let lastId = opts.lastEventId;
  let retryMs = 1000;
  let wake: (() => void) | undefined;

  const read = async (body: ReadableStream<Uint8Array>, connection: number) => {
    const decoder = new TextDecoder();
    let buffer = '';
    let type = '';
    let data: string[] = [];
    let id: string | undefined;
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (id !== undefined) lastId = id;
          if (data.length)
            events.push({
              type: type || 'message',
              id: lastId ?? '',
              data: JSON.parse(data.join('\n')),
              connection,
              at: Date.now(),
            });
          type = '';
          data = [];
          id = undefined;
          wake?.();
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: the heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id') id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  };

  void (async () => {
    while (!abort.signal.aborted) {
      const connection: StreamConnection = { at: Date.now(), lastEventId: lastId ?? null };
      connections.push(connection);
      try {
        const res = await fetch(`${base}/v1/stream?${query}`, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            ...(lastId ? { 'last-event-id': lastId } : {}),
          },
          signal: abort.signal,
        });
        connection.status = res.status;
        connection.servedBy = res.headers.get('x-served-by');
        if (res.status === 200 && res.body) await read(res.body, connections.length - 1);
        else await res.body?.cancel();
      } catch (err) {
        connection.error = String(err);
      }
      connection.ended = Date.now();
      wake?.();
      if (!abort.signal.aborted) await sleep(retryMs);
    }
  })();

  return {
    events,
    connections,
    async next(match, { from = 0, ms = 10_000 } = {}) {
      const end = Date.now() + ms;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (Date.now() > end)
          throw new Error(
            `no matching event in ${ms} ms; got ${events.map((e) => e.type).join(', ')}`,
          );
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => abort.abort(),
  };
}
