import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unauthorized } from '../errors.js';
import { Access } from './access.js';
import { findClient, type Client } from './clients.js';

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
  const cache = new Map<string, { client: Client | undefined; at: number }>();
  const lookup = async (clientId: string): Promise<Client | undefined> => {
    const hit = cache.get(clientId);
    if (hit && Date.now() - hit.at < cacheMs) return hit.client;
    const found = await findClient(app.db, clientId);
    const client = found && !found.disabled ? { ...found, secretHash: undefined } : undefined;
    if (cache.size > 10_000) cache.clear();
    cache.set(clientId, { client, at: Date.now() });
    return client;
  };
  app.decorate('forgetClient', (clientId: string) => cache.delete(clientId));

  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    if (!header) return;
    const m = /^Bearer\s+([A-Za-z0-9_\-.=]+)\s*$/i.exec(header);
    if (!m) return;
    const token = app.tokens.verify(m[1]);
    if (!token) return;
    const client = await lookup(token.clientId);
    // A token older than the client's last secret rotation went with the old secret.
    if (client && !(client.tokensNotBefore != null && token.issuedAt < client.tokensNotBefore)) request.access = new Access(client);
  });
}

/** preValidation hook of every /v1 route: 401 without a valid token, before the input is even looked at. */
export async function requireAccess(request: FastifyRequest): Promise<void> {
  if (!request.access) throw unauthorized();
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Drops a client from the token cache (after disabling it in this process). */
    forgetClient(clientId: string): void;
  }
}
