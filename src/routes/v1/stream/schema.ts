import { Type } from '@sinclair/typebox';

// GET /v1/stream (contract 10): the query, and the body for the OpenAPI document: text/event-stream,
// the SSE text itself (src/stream/frames.ts writes it). OpenAPI 3.0 cannot give the JSON of each
// event's data a schema of its own inside that text, so the description names its fields.

export const StreamQuery = Type.Object({
  siteIds: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,10}(,[0-9]{1,10})*$',
      maxLength: 120_000,
      description: 'comma-separated site ids, e.g. 1,2; without it every site of the client',
    }),
  ),
});

/** The 200 body: Server-Sent Events text, described frame by frame. */
export const StreamEvents = Type.String({
  description: [
    'Server-Sent Events, UTF-8 text that goes on until the stream ends (see the operation). Each event is a',
    'frame of lines closed by an empty line: `id: <position to resume from>`, `event: <name>`, on a snapshot',
    '`retry: <ms>`, then `data: <JSON on one line>`. A line that starts with `:` is a comment (the heartbeat).',
    'The events, and the fields of their data:',
    '`snapshot`, first on every new stream: `{ sites: [{ SiteID, LastCommunication, Current, ActiveAlarms }] }`',
    '(Current as in GET /v1/sites?dataType=additional, ActiveAlarms as POST /v1/edge/alarms/active answers);',
    "`reading`: `{ siteId, kind, record }`, a reading that replaced its equipment's current value (kind sensor,",
    'meter, pump or tank; record the reading as stored);',
    '`logs`: `{ siteId, kind, ids, from, to, count }`, the logs one upload stored for one site and kind',
    '(equipment ids, earliest and latest timestamp, rows stored);',
    '`alarm`: `{ siteId, status, alarm }`, status created, duplicate or resolved, alarm as in the active list;',
    "`config`: `{ siteId }`, an import changed the site's configuration: read it again.",
  ].join(' '),
  example: [
    'id: m1-efwnq4',
    'event: snapshot',
    'retry: 1000',
    'data: {"sites":[{"SiteID":1,"LastCommunication":null,"Current":{"sensors":[],"meters":[],"pumps":[],"tankGroups":[]},"ActiveAlarms":[]}]}',
    '',
    ': heartbeat',
    '',
    'id: m2-efwnq4',
    'event: config',
    'data: {"siteId":1}',
    '',
    '',
  ].join('\n'),
});
