import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './errors.js';

// The route table as the router holds it, so that a known path asked with a method it does not
// serve answers 405 with `Allow` (HTTP's answer), while an unknown path answers 404. Routes are
// collected as they are added (onRoute), so a new route is covered without a list to keep.

interface Entry {
  url: string;
  pattern: RegExp;
  methods: Set<string>;
}

/** A router path (`/v1/config/sensors/:sensorId`, `/console/*`) as a regular expression of request paths. */
function patternOf(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((seg) =>
      seg.startsWith(':')
        ? '[^/]+'
        : seg === '*'
          ? '.*'
          : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\*/g, '.*'),
    )
    .join('/');
  // Trailing slashes are ignored by the router (routerOptions.ignoreTrailingSlash).
  return new RegExp(`^${body}/?$`);
}

export function registerRouteTable(app: FastifyInstance): void {
  const table = new Map<string, Entry>();
  app.addHook('onRoute', (route) => {
    const entry = table.get(route.url) ?? {
      url: route.url,
      pattern: patternOf(route.url),
      methods: new Set<string>(),
    };
    for (const m of [route.method].flat()) entry.methods.add(String(m).toUpperCase());
    table.set(route.url, entry);
  });
  app.decorate('allowedMethods', (path: string): string[] => {
    const allowed = new Set<string>();
    for (const e of table.values())
      if (e.pattern.test(path)) for (const m of e.methods) allowed.add(m);
    return [...allowed].sort();
  });
  app.decorate('routeTable', () =>
    [...table.values()].map((e) => ({ url: e.url, methods: [...e.methods].sort() })),
  );
}

/**
 * Requests no route serves: 405 with `Allow` when the path is served with other methods, else 404;
 * both in the error body. (Set by plugins/rate-limit.ts, so that they are rate-limited too.)
 */
export function answerNoRoute(request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0];
  // Bounded: a message never repeats a long URL in full.
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  const allowed = request.server.allowedMethods(path);
  if (allowed.length) {
    reply.status(405).header('allow', allowed.join(', '));
    reply.send(
      errorBody(
        405,
        `${request.method} is not allowed on ${shown}; allowed: ${allowed.join(', ')}`,
        [{ path: '/', message: `method must be one of: ${allowed.join(', ')}` }],
      ),
    );
    return;
  }
  reply.status(404).send(errorBody(404, `no route ${request.method.slice(0, 20)} ${shown}`));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Methods served on a request path (empty for an unknown path). */
    allowedMethods(path: string): string[];
    /** Every route: its router path and methods (the access-matrix test is built from it). */
    routeTable(): { url: string; methods: string[] }[];
  }
}
