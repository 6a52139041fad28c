import { fastifySSE } from '@fastify/sse';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { badRequest, HttpError } from '../../../errors.js';
import { securedErrors } from '../../../schemas/common.js';
import { resolveSubscription, STREAM_RIGHT } from '../../../stream/access.js';
import { sseSink } from './sink.js';
import { StreamEvents, StreamQuery } from './schema.js';

// Contract 10: the live stream. The Accept check (406), the response head and the heartbeat comment
// come from @fastify/sse; src/stream/ does the rest (docs/stream.md says why).

const DESCRIPTION =
  'Server-Sent Events. The token goes in the Authorization header (read the stream with fetch), never in the URL. ' +
  'The first event is `snapshot` (every site streamed: LastCommunication, Current, ActiveAlarms); then, as soon as ' +
  'they are committed on any instance, `reading`, `logs`, `alarm` and `config`. Every event has an `id`: reconnect ' +
  'with `Last-Event-ID` to receive what was missed while it is retained (at least STREAM_RETENTION_MS, 5 minutes by ' +
  'default), else a fresh snapshot comes first. A comment line comes every STREAM_HEARTBEAT_MS (15 s). A client that ' +
  'falls behind has queued readings of the same equipment replaced by newer ones (never an older after a newer) and, ' +
  'past STREAM_MAX_BUFFER unsent bytes, its stream ends (it reconnects). A stream also ends at shutdown, when the ' +
  'token expires, and when the client is disabled or loses a site it streams. 400: malformed siteIds; 403: a site ' +
  'out of reach or unknown; 406: Accept refuses text/event-stream; 503: too many streams on this instance.';

/** Whether the client asked for its connection to close after this exchange (RFC 9112 9.3). */
function wantsClose(version: string, connection: string | undefined): boolean {
  const options = (connection ?? '')
    .toLowerCase()
    .split(',')
    .map((o) => o.trim());
  return options.includes('close') || (version === '1.0' && !options.includes('keep-alive'));
}

const streamSchema = {
  operationId: 'streamEvents',
  tags: ['live stream'],
  summary:
    'Follow the sites live: a snapshot, then readings, logs, alarms and configuration changes',
  description: DESCRIPTION,
  querystring: StreamQuery,
  response: {
    200: {
      description: 'the event stream',
      headers: {
        'stream-heartbeat-ms': {
          type: 'integer',
          description:
            'milliseconds between heartbeat comments (STREAM_HEARTBEAT_MS): a stream with neither an event nor a heartbeat for twice as long is stale',
        },
      },
      content: { 'text/event-stream': { schema: StreamEvents } },
    },
    ...securedErrors(403, 406, 503),
  },
};

const streamEvents: TypedHandler<typeof streamSchema> = async (request, reply) => {
  const max = request.server.settings.MAX_BATCH;
  const named = request.query.siteIds?.split(',').map(Number) ?? null;
  if (named && named.length > max)
    throw badRequest(`at most ${max} siteIds`, [
      { path: '/siteIds', message: `at most ${max} ids` },
    ]);
  if (named?.some((id) => id < 1 || id > 2_147_483_647))
    throw badRequest('siteIds must be positive 32-bit integers', [
      { path: '/siteIds', message: 'ids are 1 to 2147483647' },
    ]);
  const scope = await resolveSubscription(request.db, request.access!, named, max);
  // @fastify/sse writes `Connection: keep-alive` whatever the request asked; headers set on the
  // reply come after it, so a request that asked to close gets its connection closed when the
  // stream ends (else the next request on that socket would meet a half-finished exchange).
  if (wantsClose(request.raw.httpVersion, request.headers.connection))
    reply.header('connection', 'close');
  // How often the heartbeat comes: a client can tell a quiet stream from a dead one.
  reply.header('stream-heartbeat-ms', String(request.server.settings.STREAM_HEARTBEAT_MS));
  reply.sse.keepAlive();
  try {
    await request.server.stream.subscribe(
      sseSink(reply),
      scope,
      request.headers['last-event-id'] as string | undefined,
    );
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 503) reply.header('retry-after', '1');
    throw err;
  }
};

export async function streamRoutes(app: FastifyTypebox): Promise<void> {
  await app.register(fastifySSE, { heartbeatInterval: app.settings.STREAM_HEARTBEAT_MS });
  app.get(
    '/stream',
    {
      sse: { kind: 'only' },
      config: { right: STREAM_RIGHT },
      // The stream or a 406, by the Accept header (checked by @fastify/sse): caches must key on it.
      preHandler: async (_request, reply) => {
        reply.header('vary', 'accept');
      },
      schema: streamSchema,
    },
    streamEvents,
  );
}
