import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings.js';
import type { Database } from '../db/index.js';
import { HttpError, unauthorized } from '../errors.js';
import { covers, decode, encode } from './cursor.js';
import { toEvent } from './events.js';
import { Follower, type Followed } from './follower.js';
import { dropForeignEvents, Pruner } from './prune.js';
import { CHANNEL_SQL } from './publish.js';
import { replay } from './replay.js';
import { readSnapshot } from './snapshot.js';
import { cursorOf } from './frames.js';
import { Subscriber, type Sink } from './subscriber.js';
import { checkSubscriptions, type Subscription } from './access.js';

// The live stream of one instance: its subscribers by site, the follower that feeds them, the
// wake-ups between instances (LISTEN/NOTIFY on one channel per schema), pruning, and shutdown.

/** A client reconnects after this long when its stream ends (shutdown, too slow). */
const RETRY_MS = 1000;
/** After a local commit, other instances are woken at most this often (each NOTIFY is a commit). */
const NOTIFY_GAP_MS = 10;
const FOLLOW_BATCH = 2000;
/** The reason a stream ends when its token expires. */
const TOKEN_EXPIRED = 'token expired';

export class StreamService {
  private readonly follower: Follower;
  private readonly bySite = new Map<number, Set<Subscriber>>();
  private readonly everySite = new Set<Subscriber>();
  private readonly subscriptions = new Map<Subscriber, Subscription>();
  private readonly instance = randomUUID();
  private channel = '';
  private unlisten: (() => Promise<void>) | undefined;
  private timers: NodeJS.Timeout[] = [];
  private notifying = false;
  private notifyAgain = false;
  private closing = false;

  constructor(
    private readonly db: Database,
    private readonly settings: Settings,
    private readonly log: Logger,
  ) {
    this.follower = new Follower(db, {
      batch: FOLLOW_BATCH,
      pollMs: settings.STREAM_POLL_MS,
      onEvents: (events) => this.deliver(events),
      onError: (err) =>
        log.warn({ err }, 'stream: reading events failed; trying again at the next wake-up'),
    });
  }

  get size(): number {
    return this.subscriptions.size;
  }

  async start(): Promise<void> {
    const [{ channel }] = await this.db.query<{ channel: string }>(
      `SELECT ${CHANNEL_SQL} AS channel`,
    );
    this.channel = channel;
    this.unlisten = await this.db.listen(
      channel,
      (from) => from !== this.instance && this.follower.kick(),
    );
    const foreign = await dropForeignEvents(this.db);
    if (foreign)
      this.log.warn(
        { events: foreign },
        'stream: dropped events of transactions this server has not reached (a database restored from another server)',
      );
    const retention = this.settings.STREAM_RETENTION_MS;
    const pruner = new Pruner(this.db, retention);
    const prune = oneAtATime(() =>
      pruner.run().catch((err) => this.log.warn({ err }, 'stream: pruning events failed')),
    );
    this.timers.push(setInterval(prune, Math.min(60_000, Math.max(1000, retention / 5))).unref());
    this.timers.push(
      setInterval(
        oneAtATime(() => this.sweep()),
        this.settings.STREAM_HEARTBEAT_MS,
      ).unref(),
    );
  }

  /** A write of this instance committed (events may have been stored): read them, and wake the others. */
  committed(): void {
    this.follower.kick();
    // PGlite belongs to this process: there is nobody else to wake.
    if (this.db.kind === 'postgres') this.wakeOthers();
  }

  private wakeOthers(): void {
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = true;
    this.notifyAgain = false;
    this.db
      // Its own transaction, committed without waiting for the disk: a lost notice only delays.
      .query(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [
        this.channel,
        this.instance,
      ])
      .catch((err) =>
        this.log.warn(
          { err },
          'stream: NOTIFY failed; other instances find the events at their next poll',
        ),
      )
      .finally(() =>
        setTimeout(() => {
          this.notifying = false;
          if (this.notifyAgain && !this.closing) this.wakeOthers();
        }, NOTIFY_GAP_MS).unref(),
      );
  }

  /**
   * Streams to one client: a snapshot, or after a reconnect what it missed, then live events. The
   * subscription is registered before anything is read, so nothing committed meanwhile is lost.
   */
  async subscribe(sink: Sink, scope: Subscription, lastEventId: string | undefined): Promise<void> {
    if (this.closing) throw unavailable('the service is shutting down; connect again');
    if (this.size >= this.settings.STREAM_MAX_SUBSCRIBERS)
      throw unavailable('too many streams on this instance; try again shortly');
    const sub = new Subscriber(scope.sites, sink, this.settings.STREAM_MAX_BUFFER, (reason) =>
      this.remove(sub, reason),
    );
    // Registered first: it keeps the follower active, and what it hands on from now on is held.
    this.add(sub, scope);
    try {
      const from = decode(cursorOf(lastEventId, scope.sites));
      if (from) await this.follower.catchUp();
      else await this.follower.activate();
      // Held events up to here are in the replay or the snapshot; `base` says which to skip.
      let base = this.follower.cursor;
      const replayed =
        from && base && covers(base, from) && (await replay(this.db, sub, from, base));
      if (!replayed) {
        const snapshot = await readSnapshot(this.db, scope.sites, this.settings.MAX_BATCH);
        sub.send(encode(snapshot.cursor), 'snapshot', JSON.stringify({ sites: snapshot.sites }), {
          retry: RETRY_MS,
        });
        base = snapshot.cursor;
      }
      sub.goLive(base);
      // Ended before it began (its token expired, its client lost access, the service began to
      // shut down): nothing was sent, so the request gets an answer of its own rather than a stream
      // that never ends; an expired token is a 401, as it would have been a moment later.
      if (sub.closed && !sink.opened())
        throw sub.endReason === TOKEN_EXPIRED
          ? unauthorized('the token expired before the stream began')
          : unavailable('the stream ended before it began; connect again');
      // Before the handler returns: Fastify would otherwise answer an empty 200 of its own.
      sink.open();
      if (this.closing) sub.close('shutting down');
    } catch (err) {
      sub.close('failed');
      if (!sink.opened()) throw err;
      this.log.warn(
        { err },
        'stream: sending the snapshot or replay failed; the client reconnects',
      );
    }
  }

  /** Ends every stream (clients reconnect, to another instance), before the database closes. */
  async close(): Promise<void> {
    this.closing = true;
    this.timers.forEach(clearInterval);
    for (const sub of [...this.subscriptions.keys()]) sub.close('shutting down');
    this.follower.deactivate();
    await this.follower.idle();
    await this.unlisten?.().catch(() => {});
  }

  private add(sub: Subscriber, scope: Subscription): void {
    this.subscriptions.set(sub, scope);
    if (!sub.sites) this.everySite.add(sub);
    else
      for (const site of sub.sites)
        this.bySite.set(site, (this.bySite.get(site) ?? new Set()).add(sub));
    if (scope.expiresAt !== undefined) {
      const timer = setTimeout(
        () => sub.close(TOKEN_EXPIRED),
        Math.max(0, scope.expiresAt - Date.now()),
      ).unref();
      scope.stop = () => clearTimeout(timer);
    }
  }

  private remove(sub: Subscriber, reason: string): void {
    const scope = this.subscriptions.get(sub);
    if (!scope) return;
    scope.stop?.();
    this.subscriptions.delete(sub);
    this.everySite.delete(sub);
    for (const site of sub.sites ?? []) {
      const set = this.bySite.get(site);
      set?.delete(sub);
      if (set && !set.size) this.bySite.delete(site);
    }
    if (sub.coalesced)
      this.log.info({ clientId: scope.clientId, coalesced: sub.coalesced, reason }, 'stream ended');
    if (!this.subscriptions.size) this.follower.deactivate();
  }

  private deliver(events: Followed): void {
    for (const { row, after } of events) {
      const subs = this.bySite.get(row.siteId);
      if (!subs && !this.everySite.size) continue;
      const e = toEvent(row, after);
      if (subs) for (const sub of subs) sub.push(e);
      for (const sub of this.everySite) sub.push(e);
    }
  }

  /** Streams whose client was disabled or lost a site since they began are ended. */
  private async sweep(): Promise<void> {
    if (!this.subscriptions.size) return;
    try {
      for (const sub of await checkSubscriptions(this.db, this.subscriptions))
        sub.close('access changed');
    } catch (err) {
      this.log.warn({ err }, 'stream: checking access failed');
    }
  }
}

const unavailable = (message: string) => new HttpError(503, message);

/**
 * A timer's task that does not start again while it runs: against a database that answers slowly
 * (each call waits up to its deadline), runs would pile up and take the pool's connections.
 */
function oneAtATime(task: () => Promise<unknown>): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    void task().finally(() => (running = false));
  };
}
