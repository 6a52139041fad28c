import { EventSource } from 'eventsource';
import type { FastifyTypebox } from '../../src/app.js';

// A real SSE client (the eventsource package) against the server listening on a port: inject()
// cannot stream. The token goes in the Authorization header through a custom fetch.

export const EVENT_TYPES = ['snapshot', 'reading', 'logs', 'alarm', 'config'] as const;

export interface Received {
  type: string;
  id: string;
  data: any;
}

export interface Stream {
  events: Received[];
  /** Errors the client reported (status code when the server refused). */
  errors: { code?: number; message?: string }[];
  /** Requests the client made (1 + reconnections), with the Last-Event-ID each carried. */
  connects: (string | null)[];
  /** The first event from index `from` on that matches, waiting for it (failing after ms: a generous bound, no assertion on time). */
  next(match: (e: Received) => boolean, opts?: { from?: number; ms?: number }): Promise<Received>;
  close(): void;
}

export async function listen(app: FastifyTypebox): Promise<string> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return address;
}

const open = new Set<EventSource>();

/**
 * Closes every stream still open (for afterEach): a test that fails before it closes its streams
 * would otherwise leave clients that reconnect for ever, and the server waiting for them at close.
 */
export function closeStreams(): void {
  for (const es of open) es.close();
  open.clear();
}

/** `route`: the origin to connect to at each (re)connection, as a load balancer would choose. */
export function openStream(
  base: string,
  token: string,
  opts: { siteIds?: string; lastEventId?: string; route?: () => string } = {},
): Stream {
  const url = `${base}/v1/stream${opts.siteIds !== undefined ? `?siteIds=${opts.siteIds}` : ''}`;
  const connects: (string | null)[] = [];
  const es = new EventSource(url, {
    fetch: (input, init) => {
      const headers: Record<string, string> = {
        ...(init?.headers as Record<string, string>),
        authorization: `Bearer ${token}`,
      };
      if (opts.lastEventId && !headers['Last-Event-ID'] && !headers['last-event-id'])
        headers['last-event-id'] = opts.lastEventId;
      connects.push(headers['Last-Event-ID'] ?? headers['last-event-id'] ?? null);
      const target = opts.route ? String(input).replace(base, opts.route()) : input;
      return fetch(target, { ...init, headers });
    },
  });
  open.add(es);
  const events: Received[] = [];
  const errors: Stream['errors'] = [];
  let wake: (() => void) | undefined;
  for (const type of EVENT_TYPES)
    es.addEventListener(type, (m) => {
      events.push({ type, id: m.lastEventId, data: JSON.parse(m.data) });
      wake?.();
    });
  es.addEventListener('error', (e) => {
    errors.push({ code: (e as any).code, message: (e as any).message });
    wake?.();
  });
  return {
    events,
    errors,
    connects,
    async next(match, { from = 0, ms = 30_000 } = {}) {
      const end = Date.now() + ms;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (Date.now() > end) {
          // What arrived during a stall of the process is handled first (timers run before I/O).
          await new Promise((r) => setImmediate(r));
          const late = events.slice(from).find(match);
          if (late) return late;
          throw new Error(
            `no matching event in ${ms} ms; got [${events.map((e) => e.type).join(', ')}], ` +
              `errors ${JSON.stringify(errors)}, ${connects.length} connection(s)`,
          );
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => {
      es.close();
      open.delete(es);
    },
  };
}
