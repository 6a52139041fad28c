import { covers, encode, sees, union, type Cursor } from './cursor.js';
import type { StreamEvent } from './events.js';

// One client's stream: a queue in front of its connection. While the connection keeps up, every
// event is written at once (several in one write when they arrive together). While it lags (more
// than LAG_BYTES sent to it are still waiting in its socket's buffer), a reading waiting in the
// queue is replaced by a newer one of the same equipment (never an older after a newer); when
// unsent bytes still pass the bound, the stream is ended and the client reconnects (resuming from
// its last id). Memory per client stays bounded.

export interface Frame {
  id: string;
  event: string;
  data: string;
  retry?: number;
}

/** The connection, as the queue needs it. */
export interface Sink {
  /** Writes a frame; false when the connection's buffer is full (then wait for onDrain). */
  write(frame: Frame): boolean;
  /** Bytes written but not yet sent. */
  buffered(): number;
  onDrain(fn: () => void): void;
  /** Sends the response head now (nothing else has been sent before the first frame). */
  open(): void;
  /** Whether the response head has been sent (an error can no longer be answered as such). */
  opened(): boolean;
  /** Calls fn when the connection closes, whoever closed it. */
  onClose(fn: () => void): void;
  cork(): void;
  uncork(): void;
  end(): void;
}

interface Entry {
  /** Queued: the frame to write. Held: the event, framed once live. */
  frame?: Frame;
  event?: StreamEvent;
  bytes: number;
  key?: string;
  ts?: number;
  dropped?: boolean;
}

/** Replay pages wait until this little is left to send. */
const LOW_WATER = 64 * 1024;
/** A client with more unsent than this (a burst of events is less) lags: its queued readings may be coalesced. */
const LAG_BYTES = 64 * 1024;

const sizeOf = (f: Frame) => f.data.length + f.id.length + f.event.length + 24;

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

export class Subscriber {
  closed = false;
  /** Readings replaced in the queue by newer ones of the same equipment. */
  coalesced = 0;
  private queue: Entry[] = [];
  private bytes = 0;
  /** While the client lags: the queued reading of each equipment. */
  private latest = new Map<string, Entry>();
  private lagging = false;
  /** Events that arrive while the snapshot or replay is being sent (null once live). */
  private held: Entry[] | null = [];
  private heldLatest = new Map<string, Entry>();
  private heldBytes = 0;
  /** Until the stream's own position covers it: what the client saw before (snapshot or replay). */
  private base: Cursor | undefined;
  private waitingDrain = false;
  private scheduled = false;
  private drainWaiters: (() => void)[] = [];
  private readonly tag: string;

  constructor(
    /** null: every site. */
    readonly sites: number[] | null,
    private readonly sink: Sink,
    private readonly maxBuffer: number,
    private readonly onEnd: (reason: string) => void,
  ) {
    this.tag = `-${siteTag(sites)}`;
    sink.onClose(() => this.close('disconnected'));
  }

  /** An event as the follower hands it on. */
  push(e: StreamEvent): void {
    if (this.closed) return;
    if (!this.held) return this.pushLive(e);
    const entry: Entry = { event: e, bytes: sizeOf({ id: e.id, event: e.type, data: e.data }), key: e.key, ts: e.ts };
    // The client is catching up, so it lags by definition.
    this.heldBytes += this.coalesce(this.heldLatest, entry);
    if (entry.dropped) return;
    this.held.push(entry);
    this.heldBytes += entry.bytes;
    if (this.heldBytes > this.maxBuffer) this.close('fell behind while catching up');
  }

  /** A frame of the snapshot or of the replay: these go before anything held. */
  send(frame: Frame, key?: string, ts?: number): void {
    this.enqueue(frame, key, ts);
  }

  /** The snapshot or replay is sent: the held events follow, except those `base` has seen. */
  goLive(base?: Cursor): void {
    if (this.closed || !this.held) return;
    this.base = base;
    const held = this.held;
    this.held = null;
    this.heldLatest.clear();
    for (const entry of held) if (!entry.dropped) this.pushLive(entry.event!);
  }

  /** Resolves when little is left to send (or the stream ended). */
  drained(): Promise<void> {
    if (this.closed || this.unsent() < LOW_WATER) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.held = null;
    this.latest.clear();
    this.drainWaiters.splice(0).forEach((wake) => wake());
    this.sink.end();
    this.onEnd(reason);
  }

  private pushLive(e: StreamEvent): void {
    let id = e.id;
    if (this.base) {
      if (sees(this.base, e.xid, e.eid)) return;
      if (covers(e.after, this.base)) this.base = undefined;
      else id = encode(union(this.base, e.after));
    }
    this.enqueue({ id, event: e.type, data: e.data }, e.key, e.ts);
  }

  private unsent(): number {
    return this.bytes + this.sink.buffered();
  }

  /** When the client lags, a queued reading of the same equipment gives way to this newer one; returns bytes freed. */
  private coalesce(latest: Map<string, Entry>, entry: Entry): number {
    if (!entry.key) return 0;
    const old = latest.get(entry.key);
    latest.set(entry.key, entry);
    if (!old || old.dropped) return 0;
    this.coalesced++;
    if (entry.ts! < old.ts!) {
      // Never an older reading after a newer one.
      latest.set(entry.key, old);
      entry.dropped = true;
      return 0;
    }
    old.dropped = true;
    return -old.bytes;
  }

  /** `frame.id` is a cursor; the frame (this subscriber's own) is sent with this stream's tag. */
  private enqueue(frame: Frame, key?: string, ts?: number): void {
    if (this.closed) return;
    frame.id += this.tag;
    const entry: Entry = { frame, bytes: sizeOf(frame), key, ts };
    if (!this.lagging && this.waitingDrain && this.unsent() > LAG_BYTES) {
      // From now on what is queued may be coalesced.
      this.lagging = true;
      for (const queued of this.queue) if (queued.key && !queued.dropped) this.latest.set(queued.key, queued);
    }
    if (this.lagging) this.bytes += this.coalesce(this.latest, entry);
    if (entry.dropped) return;
    this.queue.push(entry);
    this.bytes += entry.bytes;
    if (this.unsent() > this.maxBuffer) return this.close('fell behind');
    if (!this.scheduled && !this.waitingDrain) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed || this.waitingDrain) return;
    // All that is queued goes into the socket's buffer (still counted as unsent); then, if that
    // buffer is over its mark, new events wait in the queue until it drains.
    let full = false;
    this.sink.cork();
    try {
      for (const entry of this.queue) if (!entry.dropped) full = !this.sink.write(entry.frame!);
    } finally {
      this.sink.uncork();
    }
    this.queue = [];
    this.bytes = 0;
    this.latest.clear();
    this.lagging = false;
    if (full) {
      this.waitingDrain = true;
      this.sink.onDrain(() => {
        this.waitingDrain = false;
        this.flush();
      });
    }
    if (this.unsent() < LOW_WATER) this.drainWaiters.splice(0).forEach((wake) => wake());
  }
}
