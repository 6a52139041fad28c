import { Type } from '@sinclair/typebox';
import { TELEMETRY_KINDS } from '../../../equipment.js';
import { DateTimeOutput, IntId } from '../../../schemas/common.js';
import { ActiveAlarmDto } from '../alarms/schema.js';
import { Site } from '../sites/schema.js';

// GET /v1/stream (contract 10): the query, and the body for the OpenAPI document: text/event-stream,
// the SSE text itself (src/stream/frames.ts writes it). OpenAPI 3.0 cannot give the JSON of each
// event's data a schema inside that text, so the description names its fields, and the extension
// `x-event-data` names each event's schema (Stream*Dto components) for generated clients.

export const StreamQuery = Type.Object({
  siteIds: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,10}(,[0-9]{1,10})*$',
      maxLength: 120_000,
      description: 'comma-separated site ids, e.g. 1,2; without it every site of the client',
    }),
  ),
});

const Kind = Type.Union(TELEMETRY_KINDS.map((k) => Type.Literal(k)));

export const EdgeStateDto = Type.Object(
  {
    groupId: Type.String({ description: 'the Sparkplug group id' }),
    edgeNodeId: Type.String({ description: 'the Sparkplug edge node id' }),
    deviceId: Type.Union([Type.String(), Type.Null()], {
      description: 'the Sparkplug device id; null for the edge node itself',
    }),
    online: Type.Boolean({ description: 'whether its last birth or death was a birth' }),
    since: { ...DateTimeOutput, description: 'when it went to this state' },
  },
  {
    title: 'EdgeStateDto',
    description:
      'A Sparkplug edge node or device with equipment of the site: its latest state (birth or death) and since when',
  },
);

export const StreamSnapshotDto = Type.Object(
  {
    sites: Type.Array(
      Type.Composite([
        Type.Required(Type.Pick(Site, ['SiteID', 'LastCommunication', 'Current'])),
        Type.Object({
          ActiveAlarms: Type.Array(ActiveAlarmDto),
          Edge: Type.Array(EdgeStateDto, {
            description:
              'the edge nodes and devices of the site (Sparkplug B), by group, node and device (a node before its devices); empty when none was ever seen',
          }),
        }),
      ]),
    ),
  },
  {
    title: 'StreamSnapshotDto',
    description: 'event: snapshot. The state of the streamed sites, first on every new stream',
  },
);

export const StreamReadingDto = Type.Object(
  {
    siteId: IntId,
    kind: Kind,
    record: Type.Object(
      {},
      { additionalProperties: true, description: 'the reading as stored (interface 2.10 fields)' },
    ),
  },
  {
    title: 'StreamReadingDto',
    description: 'event: reading. A reading that replaced the current value of its equipment',
  },
);

export const StreamLogsDto = Type.Object(
  {
    siteId: IntId,
    kind: Kind,
    ids: Type.Array(IntId, { description: 'the equipment whose logs were stored' }),
    from: { ...DateTimeOutput, description: 'earliest timestamp stored' },
    to: { ...DateTimeOutput, description: 'latest timestamp stored' },
    count: Type.Integer({ description: 'log rows stored (new or changed)' }),
  },
  {
    title: 'StreamLogsDto',
    description: 'event: logs. One per upload, site and kind that stored logs',
  },
);

export const StreamAlarmDto = Type.Object(
  {
    siteId: IntId,
    status: Type.Union(
      ['created', 'duplicate', 'resolved', 'acknowledged', 'shelved', 'unshelved'].map((v) =>
        Type.Literal(v),
      ),
      {
        description:
          'what changed: created, duplicate (a send counted again), resolved, acknowledged, shelved, unshelved (by a person, or by the service when the shelf ended)',
      },
    ),
    alarm: ActiveAlarmDto,
  },
  { title: 'StreamAlarmDto', description: 'event: alarm. An alarm as it stands after the change' },
);

export const StreamConfigDto = Type.Object(
  { siteId: IntId },
  {
    title: 'StreamConfigDto',
    description: "event: config. An import changed the site's configuration: read it again",
  },
);

export const StreamEdgeDto = Type.Object(
  {
    siteId: IntId,
    groupId: Type.String({ description: 'the Sparkplug group id' }),
    edgeNodeId: Type.String({ description: 'the Sparkplug edge node id' }),
    deviceId: Type.Union([Type.String(), Type.Null()], {
      description: 'the Sparkplug device id; null for the edge node itself',
    }),
    online: Type.Boolean({ description: 'true at a birth, false at a death' }),
  },
  {
    title: 'StreamEdgeDto',
    description:
      'event: edge. A Sparkplug edge node or device with equipment of the site went online (birth) or offline (death)',
  },
);

/** The 200 body: Server-Sent Events text, described frame by frame. */
export const StreamEvents = Type.String({
  description: [
    'Server-Sent Events, UTF-8 text that goes on until the stream ends (see the operation). Each event is a',
    'frame of lines closed by an empty line: `id: <position to resume from>`, `event: <name>`, on a snapshot',
    '`retry: <ms>`, then `data: <JSON on one line>`. A line that starts with `:` is a comment (the heartbeat).',
    'The events, and the fields of their data:',
    '`snapshot`, first on every new stream: `{ sites: [{ SiteID, LastCommunication, Current, ActiveAlarms, Edge }] }`',
    '(Current as in GET /v1/sites?dataType=additional, ActiveAlarms as POST /v1/edge/alarms/active answers,',
    'Edge the latest state of each Sparkplug edge node and device of the site: `[{ groupId, edgeNodeId, deviceId, online, since }]`);',
    "`reading`: `{ siteId, kind, record }`, a reading that replaced its equipment's current value (kind sensor,",
    'meter, pump or tank; record the reading as stored);',
    '`logs`: `{ siteId, kind, ids, from, to, count }`, the logs one upload stored for one site and kind',
    '(equipment ids, earliest and latest timestamp, rows stored);',
    '`alarm`: `{ siteId, status, alarm }`, status created, duplicate, resolved, acknowledged, shelved or unshelved,',
    'alarm as in the active list;',
    "`config`: `{ siteId }`, an import changed the site's configuration: read it again;",
    '`edge`: `{ siteId, groupId, edgeNodeId, deviceId, online }`, a Sparkplug edge node (deviceId null) or device',
    'bound to equipment of the site went online (its birth) or offline (its death).',
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
  'x-event-data': {
    snapshot: StreamSnapshotDto,
    reading: StreamReadingDto,
    logs: StreamLogsDto,
    alarm: StreamAlarmDto,
    config: StreamConfigDto,
    edge: StreamEdgeDto,
  },
});
