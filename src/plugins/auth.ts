import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { unauthorized } from '../errors.js';
import { Access } from '../auth/access.js';
import { ClientCache } from '../auth/client-cache.js';
import { findClient } from '../auth/clients.js';
import { issuedAfterRotation } from '../auth/tokens.js';
import { withinDeadline } from '../db/deadline.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carries a valid token of an enabled client. */
    access?: Access;
  }
}

/**
 * Resolves the bearer token on every request (before rate limiting, which counts per client).
 * It never rejects: `requireAccess` does, on the routes that need a token.
 */
export function registerTokenResolution(app: FastifyInstance, cacheMs: number): void {
  const cache = new ClientCache(async (clientId, db = app.db) => {
    const found = await findClient(db, clientId);
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
    // A record read less than CLIENT_CACHE_MS ago at once; else read within the request's deadline,
    // also while waiting for a lookup slot or another request's lookup.
    const known = cache.fresh(token.clientId);
    const client = known
      ? known.client
      : await withinDeadline(request.deadline - Date.now(), () =>
          cache.get(token.clientId, request.db),
        );
    // A token issued before the client's last secret rotation or disable went with them.
    if (client && issuedAfterRotation(token, client)) request.access = new Access(client, token);
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
