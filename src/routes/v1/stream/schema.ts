import { TELEMETRY_KINDS } from '../../../equipment.js';
import { Type } from '@sinclair/typebox';
import { DateTimeOutput, IntId } from '../../../schemas/common.js';
import { ActiveAlarmDto } from '../alarms/schema.js';
import { Site } from '../sites/schema.js';

// GET /v1/stream (contract 10): the query, and the JSON of each event's data, for the OpenAPI
// document (the body itself is text/event-stream).

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

export const StreamSnapshotDto = Type.Object(
  {
    sites: Type.Array(
      Type.Composite([
        Type.Required(Type.Pick(Site, ['SiteID', 'LastCommunication', 'Current'])),
        Type.Object({ ActiveAlarms: Type.Array(ActiveAlarmDto) }),
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
    status: Type.Union([
      Type.Literal('created'),
      Type.Literal('duplicate'),
      Type.Literal('resolved'),
    ]),
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

export const StreamEvents = Type.Union(
  [StreamSnapshotDto, StreamReadingDto, StreamLogsDto, StreamAlarmDto, StreamConfigDto],
  {
    description:
      'Server-Sent Events; the data of each is one of these JSON objects, by its event name',
  },
);
