import { covers, encode, sees, union, type Cursor } from './cursor.js';
import type { StreamEvent } from './events.js';
import { frame, siteTag } from './frames.js';

// One client's stream: a queue in front of its connection. While the connection keeps up, every
// event is written at once (several in one write when they arrive together). While it lags (more
// than LAG_BYTES sent to it are still waiting in its socket's buffer), a reading waiting in the
// queue is replaced by a newer one of the same equipment (never an older after a newer); when
// unsent bytes still pass the bound, the stream is ended and the client reconnects (resuming from
// its last id). Memory per client stays bounded.

/** The connection, as the queue needs it. */
export interface Sink {
  /** Writes text of the stream; false when the connection's buffer is full (then wait for onDrain). */
  write(text: string): boolean;
  /** Bytes written but not yet sent. */
  buffered(): number;
  onDrain(fn: () => void): void;
  /** Sends the response head now (nothing else has been sent before the first event). */
  open(): void;
  /** Whether the response head has been sent (an error can no longer be answered as such). */
  opened(): boolean;
  /** Calls fn when the connection closes, whoever closed it. */
  onClose(fn: () => void): void;
  end(): void;
}

interface Entry {
  /** Queued: the event's text. Held: the event, framed once live. */
  text?: string;
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

export class Subscriber {
  closed = false;
  /** Why it closed (as given to close), once it has. */
  endReason?: string;
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
    const entry: Entry = { event: e, bytes: e.id.length + e.tail.length + 8, key: e.key, ts: e.ts };
    // The client is catching up, so it lags by definition.
    this.heldBytes += this.coalesce(this.heldLatest, entry);
    if (entry.dropped) return;
    this.held.push(entry);
    this.heldBytes += entry.bytes;
    if (this.heldBytes > this.maxBuffer) this.close('fell behind while catching up');
  }

  /** An event of the snapshot or of the replay (`id` a cursor): these go before anything held. */
  send(
    id: string,
    event: string,
    data: string,
    opts: { key?: string; ts?: number; retry?: number } = {},
  ): void {
    this.enqueue(frame(id + this.tag, event, data, opts.retry), opts.key, opts.ts);
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
    this.endReason = reason;
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
    this.enqueue(`id: ${id}${this.tag}${e.tail}`, e.key, e.ts);
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

  private enqueue(text: string, key?: string, ts?: number): void {
    if (this.closed) return;
    const entry: Entry = { text, bytes: text.length, key, ts };
    if (!this.lagging && this.waitingDrain && this.unsent() > LAG_BYTES) {
      // From now on what is queued may be coalesced.
      this.lagging = true;
      for (const queued of this.queue)
        if (queued.key && !queued.dropped) this.latest.set(queued.key, queued);
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
    // All that is queued goes into the socket's buffer in one write (still counted as unsent); then,
    // if that buffer is over its mark, new events wait in the queue until it drains.
    let text = '';
    for (const entry of this.queue) if (!entry.dropped) text += entry.text;
    const full = !this.sink.write(text);
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
