import { Type } from '@sinclair/typebox';
import {
  BigIdString,
  DateTimeInput,
  DateTimeOutput,
  IntId,
  Nullable,
} from '../../../schemas/common.js';
import { MAX_SERIES_POINTS, SERIES, type SeriesLength } from '../../../alarms/kpis.js';
import { MAX_RANGE_DAYS } from '../../../alarms/list.js';
import { StringEnum } from './schema.js';

// DTOs of alarm performance (contract 16, ISA-18.2 / EEMUA 191).

export const AlarmKpisRequestDto = (max: number) =>
  Type.Object(
    {
      siteIds: Type.Array(IntId, {
        minItems: 1,
        maxItems: max,
        description: `1 to ${max} site ids`,
      }),
      start: { ...DateTimeInput, description: 'inclusive' } as typeof DateTimeInput,
      end: {
        ...DateTimeInput,
        description: `exclusive; after start, at most ${MAX_RANGE_DAYS} days later`,
      } as typeof DateTimeInput,
      series: Type.Optional(
        StringEnum(Object.keys(SERIES) as SeriesLength[], {
          description: `add Series, alarms raised per UTC-aligned window of this length (JSON only); at most ${MAX_SERIES_POINTS} elements over all sites`,
        }),
      ),
    },
    { title: 'AlarmKpisRequestDto' },
  );

export const AlarmKeyCountDto = Type.Object(
  {
    EquipmentTypeID: Nullable(
      Type.Integer({ description: 'as in the alarm records; null for a site alarm' }),
    ),
    EquipmentID: Nullable(BigIdString),
    AlarmType: Type.String(),
    Count: Type.Integer({ description: 'alarms of this key raised in the range' }),
  },
  {
    title: 'AlarmKeyCountDto',
    description: 'An alarm key (site, equipment, alarm type) and how often it was raised',
  },
);

export const AlarmKpisDto = Type.Object(
  {
    SiteID: Type.Integer(),
    Raised: Type.Integer({ description: 'alarms the service raised (RaisedAt) in [start, end)' }),
    AveragePer10Min: Type.Number({
      description:
        'Raised / the number of 10-minute UTC-aligned windows overlapping [start, end), partial ones included',
    }),
    Peak10Min: Type.Integer({ description: 'the most alarms raised in one of those windows' }),
    FloodPercent: Type.Number({
      description:
        '100 x the windows with more than 10 alarms raised / the windows (EEMUA 191 floods)',
    }),
    Standing: Type.Integer({
      description: 'alarms raised before end - 24 h and not resolved at end, whenever raised',
    }),
    MeanSecondsToAcknowledge: Nullable(
      Type.Number({
        description:
          'mean, over the alarms counted in Raised that were acknowledged, of AcknowledgedAt - RaisedAt; null when none was',
      }),
    ),
    TopAlarms: Type.Array(AlarmKeyCountDto, {
      description: 'the 10 keys raised most in the range, by Count, then key',
    }),
    Chattering: Type.Array(AlarmKeyCountDto, {
      description:
        'every key raised 3 or more times within 60 s (its third raise at most 60 s after the first)',
    }),
    Series: Type.Optional(
      Type.Array(
        Type.Object(
          {
            Start: { ...DateTimeOutput, description: "the window's UTC-aligned start" },
            Raised: Type.Integer({ description: 'alarms raised (RaisedAt) in the window' }),
          },
          { title: 'AlarmKpisWindowDto', description: 'Alarms raised in one window of the series' },
        ),
        {
          description:
            'with series only: one element per window overlapping [start, end), empty ones included',
        },
      ),
    ),
  },
  { title: 'AlarmKpisDto', description: "One site's alarm performance over the range" },
);
