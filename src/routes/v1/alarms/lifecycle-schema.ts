import { Type } from '@sinclair/typebox';
import {
  BigIdInput,
  BigIdString,
  DateTimeInput,
  DateTimeOutput,
  IntId,
  Nullable,
  Paginated,
} from '../../../schemas/common.js';
import { JOURNAL_EVENTS } from '../../../alarms/journal.js';
import { ALARM_STATES, MAX_RANGE_DAYS } from '../../../alarms/list.js';
import { ActiveAlarmDto, StringEnum } from './schema.js';

// DTOs of alarm management (contract 16): the operator's actions, the alarm list and the journal.

const Note = Type.Optional(
  Nullable(
    Type.String({
      maxLength: 1000,
      description: 'why; kept in the journal entry of the change (at most 1,000 characters)',
    }),
  ),
);

const ActionEntry = Type.Object(
  {
    SiteAlarmLogID: {
      ...BigIdInput,
      description:
        'an alarm of the site (from the active list or the alarm list); string or integer, a string above 2^53',
    },
    note: Note,
  },
  { title: 'AlarmActionEntryDto', description: 'One alarm of the site, with an optional note' },
);

const alarmsOf = (max: number) =>
  Type.Array(ActionEntry, { maxItems: max, description: `at most ${max} alarms of this site` });

export const AlarmActionDto = (max: number) =>
  Type.Object(
    { siteId: IntId, alarms: alarmsOf(max) },
    {
      title: 'AlarmActionDto',
      description: 'Alarms of one site to acknowledge or unshelve, each with an optional note',
    },
  );

export const AlarmShelveDto = (max: number) =>
  Type.Object(
    {
      siteId: IntId,
      minutes: Type.Integer({
        minimum: 1,
        maximum: 1440,
        description: 'how long, 1 to 1440 minutes from now; one duration for every alarm',
      }),
      alarms: alarmsOf(max),
    },
    { title: 'AlarmShelveDto', description: 'Alarms of one site to shelve for a while' },
  );

const result = (title: string, statuses: string[], description: string, more = {}) =>
  Type.Object(
    {
      SiteAlarmLogID: BigIdString,
      status: StringEnum(statuses, { description }),
      ...more,
    },
    { title },
  );

export const AlarmAcknowledgeResultDto = result(
  'AlarmAcknowledgeResultDto',
  ['acknowledged', 'already_acknowledged'],
  'acknowledged: by this request; already_acknowledged: before (or by an earlier entry of this request)',
);

export const AlarmShelveResultDto = result(
  'AlarmShelveResultDto',
  ['shelved', 'already_resolved'],
  'shelved: by this request (again from now when it was shelved); already_resolved: a resolved alarm is not shelved',
  {
    ShelvedUntil: Nullable({
      ...DateTimeOutput,
      description: 'when the shelf ends; null for already_resolved',
    }),
  },
);

export const AlarmUnshelveResultDto = result(
  'AlarmUnshelveResultDto',
  ['unshelved', 'not_shelved'],
  'unshelved: by this request; not_shelved: it was not shelved (or its shelf had ended)',
);

const range = {
  start: { ...DateTimeInput, description: 'inclusive' } as typeof DateTimeInput,
  end: {
    ...DateTimeInput,
    description: `exclusive; after start, at most ${MAX_RANGE_DAYS} days later`,
  } as typeof DateTimeInput,
};
const paging = {
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'from 1' }),
  perPage: Type.Integer({ minimum: 1, maximum: 500 }),
};
const siteIds = (max: number) =>
  Type.Array(IntId, { minItems: 1, maxItems: max, description: `1 to ${max} site ids` });

export const AlarmListFilterDto = (max: number) =>
  Type.Object(
    {
      siteIds: siteIds(max),
      ...range,
      state: Type.Optional(
        StringEnum(ALARM_STATES, {
          default: 'all',
          description:
            'all (default); active: unresolved ones; unacknowledged: not acknowledged, resolved or not',
        }),
      ),
      ...paging,
    },
    { title: 'AlarmListFilterDto' },
  );

export const AlarmListItemDto = Type.Object(
  {
    ...ActiveAlarmDto.properties,
    ResolvedAt: Nullable({ ...DateTimeOutput, description: 'null while unresolved' }),
    ResolvedBy: Nullable(
      Type.String({
        description: 'the client id that resolved it, "rule:<AlarmRuleID>" or "communication"',
      }),
    ),
    ResolveNote: Nullable(Type.String()),
  },
  { title: 'AlarmListItemDto', description: 'An alarm, resolved or not' },
);

export const AlarmListPageDto = Paginated(AlarmListItemDto, 'AlarmListPageDto');

export const AlarmJournalFilterDto = (max: number) =>
  Type.Object(
    {
      siteIds: siteIds(max),
      ...range,
      SiteAlarmLogID: Type.Optional({
        ...BigIdInput,
        description: 'only the entries of this alarm, which must be an alarm of one of the sites',
      }),
      ...paging,
    },
    { title: 'AlarmJournalFilterDto' },
  );

export const AlarmJournalEntryDto = Type.Object(
  {
    EventID: BigIdString,
    SiteAlarmLogID: BigIdString,
    SiteID: Type.Integer(),
    Time: { ...DateTimeOutput, description: "the service's time of the change" },
    Event: StringEnum(JOURNAL_EVENTS),
    By: Nullable(
      Type.String({
        description:
          'a client id, "rule:<AlarmRuleID>", "communication", or null: the service itself (a shelf that ended)',
      }),
    ),
    Note: Nullable(Type.String()),
    Channel: Nullable(Type.String({ description: 'the ChannelID of a notification' })),
    Step: Nullable(Type.Integer({ description: 'the escalation step of a notification' })),
  },
  { title: 'AlarmJournalEntryDto', description: 'One change of an alarm' },
);

export const AlarmJournalPageDto = Paginated(AlarmJournalEntryDto, 'AlarmJournalPageDto');
