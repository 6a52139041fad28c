import { isDatabaseUnavailable } from '../db/deadline.js';
import type { Queryable } from '../db/index.js';
import type { Client } from './clients.js';

const MAX_CACHED = 10_000;
/** While the clients table cannot be read in time (locked, database slow), a client verified this recently is taken as it was. */
const STALE_MS = 60_000;
/** How long a request with a cached client waits for its record to be read again before it takes the cached one. */
const REFRESH_WAIT_MS = 250;
/** Lookups at once: a locked clients table holds at most this many connections. */
const MAX_LOOKUPS = 3;

/**
 * Verified clients, newest use last (least recently used go first beyond MAX_CACHED). A record is
 * reused for ttlMs; after that it is read again, one read per client at a time. When that read does
 * not answer promptly and the record is less than STALE_MS old, the request goes on with it: a lock on
 * the clients table must not stop every route. (A disable commits to that table, so it is never
 * hidden by the lock; it takes effect within ttlMs.) With ttlMs 0 every request reads the table.
 */
export class ClientCache {
  private readonly entries = new Map<string, { client: Client | undefined; at: number }>();
  private readonly reading = new Map<string, Promise<Client | undefined>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    /** Reads a record; `db` is the asking request's database, when given (its calls end by its deadline). */
    private readonly read: (clientId: string, db?: Queryable) => Promise<Client | undefined>,
    private readonly ttlMs: number,
    private readonly limits = { maxCached: MAX_CACHED, staleMs: STALE_MS, waitMs: REFRESH_WAIT_MS },
  ) {}

  /**
   * The record of a client read less than ttlMs ago, at once (no promise, no timer: the usual case
   * of a request); undefined when it has to be read (then `get`).
   */
  fresh(clientId: string): { client: Client | undefined } | undefined {
    const hit = this.entries.get(clientId);
    if (!hit || Date.now() - hit.at >= this.ttlMs) return undefined;
    this.entries.delete(clientId);
    this.entries.set(clientId, hit);
    return hit;
  }

  async get(clientId: string, db?: Queryable): Promise<Client | undefined> {
    const known = this.fresh(clientId);
    if (known) return known.client;
    const hit = this.entries.get(clientId);
    const age = hit ? Date.now() - hit.at : Infinity;
    const fresh = this.refresh(clientId, db);
    if (!hit || this.ttlMs === 0 || age >= this.limits.staleMs) return fresh;
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<Client | undefined>(
      (resolve) => (timer = setTimeout(() => resolve(hit.client), this.limits.waitMs)),
    );
    const answer = fresh.catch((err) => {
      if (isDatabaseUnavailable(err)) return hit.client;
      throw err;
    });
    return Promise.race([answer, patience]).finally(() => clearTimeout(timer));
  }

  forget(clientId: string): void {
    this.entries.delete(clientId);
  }

  private refresh(clientId: string, db?: Queryable): Promise<Client | undefined> {
    let pending = this.reading.get(clientId);
    if (!pending) {
      pending = this.limited(() => this.read(clientId, db)).then((client) => {
        this.entries.delete(clientId);
        if (this.ttlMs > 0) {
          if (this.entries.size >= this.limits.maxCached)
            this.entries.delete(this.entries.keys().next().value!);
          this.entries.set(clientId, { client, at: Date.now() });
        }
        return client;
      });
      const done = pending.finally(() => this.reading.delete(clientId));
      done.catch(() => {});
      this.reading.set(clientId, pending);
    }
    return pending;
  }

  private async limited<T>(run: () => Promise<T>): Promise<T> {
    while (this.running >= MAX_LOOKUPS) await new Promise<void>((wake) => this.waiting.push(wake));
    this.running++;
    try {
      return await run();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}
