import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { unauthorized } from '../errors.js';
import { isDatabaseUnavailable } from '../db/deadline.js';
import { Access } from './access.js';
import { findClient, type Client } from './clients.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carries a valid token of an enabled client. */
    access?: Access;
  }
}

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
    private readonly read: (clientId: string) => Promise<Client | undefined>,
    private readonly ttlMs: number,
    private readonly limits = { maxCached: MAX_CACHED, staleMs: STALE_MS, waitMs: REFRESH_WAIT_MS },
  ) {}

  async get(clientId: string): Promise<Client | undefined> {
    const hit = this.entries.get(clientId);
    const age = hit ? Date.now() - hit.at : Infinity;
    if (hit && age < this.ttlMs) {
      this.entries.delete(clientId);
      this.entries.set(clientId, hit);
      return hit.client;
    }
    const fresh = this.refresh(clientId);
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

  private refresh(clientId: string): Promise<Client | undefined> {
    let pending = this.reading.get(clientId);
    if (!pending) {
      pending = this.limited(() => this.read(clientId)).then((client) => {
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

/**
 * Resolves the bearer token on every request (before rate limiting, which counts per client).
 * It never rejects: `requireAccess` does, on the routes that need a token.
 */
export function registerTokenResolution(app: FastifyInstance, cacheMs: number): void {
  const cache = new ClientCache(async (clientId) => {
    const found = await findClient(app.db, clientId);
    return found && !found.disabled ? { ...found, secretHash: undefined } : undefined;
  }, cacheMs);
  app.decorate('forgetClient', (clientId: string) => cache.forget(clientId));

  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    if (!header) return;
    const m = /^Bearer\s+([A-Za-z0-9_\-.=]+)\s*$/i.exec(header);
    if (!m) return;
    const token = app.tokens.verify(m[1]);
    if (!token) return;
    const client = await cache.get(token.clientId);
    // A token older than the client's last secret rotation went with the old secret.
    if (client && !(client.tokensNotBefore != null && token.issuedAt < client.tokensNotBefore))
      request.access = new Access(client);
  });
}

/** 401 without a valid token: run before the body is read, so an unauthenticated body costs nothing. */
export async function requireAccess(request: FastifyRequest): Promise<void> {
  if (!request.access) throw unauthorized();
}

/**
 * Adds a check to the onRequest hooks of every route registered in this scope from now on, after
 * those already there (the token resolution, the rate limit): it runs before the body is read or parsed.
 */
export function checkBeforeBody(app: FastifyInstance, check: onRequestHookHandler): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const hooks = route.onRequest;
    route.onRequest = [...(Array.isArray(hooks) ? hooks : hooks ? [hooks] : []), check];
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Drops a client from the token cache (after disabling it in this process). */
    forgetClient(clientId: string): void;
  }
}
