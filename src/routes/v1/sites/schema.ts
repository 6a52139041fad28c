import { Type, type Static } from '@sinclair/typebox';
import { SORT_COLUMNS } from '../../../sites/repository.js';
import { DateTimeOutput, IntId, Nullable, Paginated } from '../../../schemas/common.js';

/** Case-insensitive choice among words, for query parameters whose case is ignored. */
const anyCase = (words: string[]) =>
  Type.String({
    pattern: `^(${words.map((w) => [...w].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('')).join('|')})$`,
    description: `one of ${words.join(', ')}; case is ignored`,
  });

export const SitesQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  perPage: Type.Integer({ minimum: 1, maximum: 500 }),
  dataType: Type.Optional(
    Type.Union([Type.Literal('basic'), Type.Literal('additional')], { default: 'basic' }),
  ),
  name: Type.Optional(
    Type.String({ maxLength: 200, description: 'case-insensitive substring of the site name' }),
  ),
  active: Type.Optional(Type.Boolean()),
  companyId: Type.Optional(IntId),
  sortDirection: Type.Optional(anyCase(['asc', 'desc'])),
  sortBy: Type.Optional(anyCase(Object.keys(SORT_COLUMNS))),
});
export type SitesQuery = Static<typeof SitesQuery>;

const Reading = Type.Object(
  {},
  { additionalProperties: true, description: 'the latest reading record as uploaded' },
);

export const Site = Type.Object(
  {
    SiteID: Type.Integer(),
    Name: Type.String(),
    CompanyID: Type.Integer(),
    CompanyName: Type.String(),
    ProjectID: Nullable(Type.Integer()),
    Active: Type.Boolean(),
    Latitude: Nullable(Type.Number()),
    Longitude: Nullable(Type.Number()),
    TimeZone: Nullable(Type.String()),
    CommLossMinutes: Type.Integer({
      minimum: 0,
      maximum: 10_080,
      description:
        'minutes without data (uploads, readings, MQTT) after which the site gets a COMM_LOSS alarm; 0: never (default 60)',
    }),
    LastCommunication: Type.Optional(Nullable(DateTimeOutput)),
    ActiveAlarmCount: Type.Optional(Type.Integer()),
    Current: Type.Optional(
      Type.Object({
        sensors: Type.Array(Reading),
        meters: Type.Array(Reading),
        pumps: Type.Array(Reading),
        tankGroups: Type.Array(Reading),
      }),
    ),
  },
  {
    title: 'Site',
    description: 'LastCommunication, ActiveAlarmCount and Current only with dataType=additional',
  },
);
export type Site = Static<typeof Site>;

export const SitePage = Paginated(Site, 'SitePage');
