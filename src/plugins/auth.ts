import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { forbidden, unauthorized } from '../errors.js';
import { Access } from '../auth/access.js';
import { isRight, RIGHTS, ROLES, type Right } from '../auth/roles.js';
import { errorResponses } from '../schemas/common.js';
import { ClientCache } from '../auth/client-cache.js';
import { findClient } from '../auth/clients.js';
import { issuedAfterRotation } from '../auth/tokens.js';
import { withinDeadline } from '../db/deadline.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carries a valid token of an enabled client. */
    access?: Access;
  }
  interface FastifyContextConfig {
    /**
     * The right a /v1 route needs (src/auth/roles.ts says which roles hold it), checked with the
     * token before the body is read. A /v1 route that names none answers 403 to every client.
     */
    right?: Right;
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

/**
 * 401 without a valid token, then 403 unless the client's role holds the route's right (none
 * declared: nobody's): run before the body is read, so a body nobody may send costs nothing.
 */
export async function requireAccess(request: FastifyRequest): Promise<void> {
  if (!request.access) throw unauthorized();
  const right = request.routeOptions.config.right;
  if (right === undefined) throw forbidden('this route declares no right: no role may call it');
  request.access.assertRight(right);
}

/**
 * For every route registered in this scope from now on: a misspelt right stops the app at start;
 * the OpenAPI document says which roles may call the route, and lists 403 where some may not.
 */
export function declareRights(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const right: unknown = route.config?.right;
    if (right !== undefined && !isRight(right))
      throw new Error(`route ${String(route.method)} ${route.url}: unknown right ${String(right)}`);
    if (right === undefined)
      app.log.warn(`route ${String(route.method)} ${route.url} declares no right: it answers 403`);
    const schema = route.schema;
    if (!schema || schema.hide) return;
    const roles: readonly string[] = right === undefined ? [] : RIGHTS[right];
    const said = `Roles: ${roles.length ? roles.join(', ') : 'none (the route declares no right)'}.`;
    const description = typeof schema.description === 'string' ? schema.description : '';
    const response = schema.response as Record<string, unknown> | undefined;
    route.schema = {
      ...schema,
      description: description.endsWith(said) ? description : `${description} ${said}`.trim(),
      ...(response && roles.length < ROLES.length && !response[403]
        ? { response: { ...response, ...errorResponses(403) } }
        : {}),
    };
  });
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
