import { Type, type TSchema } from '@sinclair/typebox';
import { DateTimeInput, DateTimeOutput, IntId } from '../../../schemas/common.js';
import { recordSchema, TRANSACTION } from '../../../schemas/records.js';
import { TRANSACTION_LOG_FIELDS } from '../../../transactions/logs.js';

const Uuid = Type.String({ format: 'uuid' });
const SiteIds = (max: number, description: string) =>
  Type.Array(IntId, { minItems: 1, maxItems: max, description });

export const TransactionLogsLoadDto = (max: number) =>
  Type.Object(
    {
      siteIds: SiteIds(max, `1 to ${max} site ids`),
      start: DateTimeInput,
      end: {
        ...DateTimeInput,
        description: 'exclusive; after start, at most 366 days later',
      } as typeof DateTimeInput,
      motionCap: Type.Optional(
        Type.Boolean({
          default: false,
          description: 'add MotionCaptureImageIDs (needs every camera of every site)',
        }),
      ),
    },
    { title: 'TransactionLogsLoadDto' },
  );

const transaction = recordSchema(TRANSACTION, 'out').properties as Record<string, TSchema>;
const extra: Record<string, TSchema> = {
  SiteName: Type.String(),
  SiteCompany: Type.String({ description: "name of the site's company" }),
  TicketImageIDs: Type.Array(Uuid, { description: 'ticket photos, for POST /v1/images/tickets' }),
};
export const TransactionLogDto = Type.Object(
  {
    ...Object.fromEntries(TRANSACTION_LOG_FIELDS.map((f) => [f, transaction[f] ?? extra[f]])),
    MotionCaptureImageIDs: Type.Optional(
      Type.Array(Uuid, {
        description:
          'only with motionCap: gate-camera captures of the truck, for POST /v1/images/motion-capture',
      }),
    ),
  },
  { title: 'TransactionLogDto' },
);

export const ChangeLogsRequestDto = (max: number) =>
  Type.Object(
    {
      start: DateTimeInput,
      end: {
        ...DateTimeInput,
        description: 'exclusive; after start, at most 60 days later',
      } as typeof DateTimeInput,
      filters: Type.Optional(
        Type.Object({
          siteIds: Type.Optional(
            Type.Array(IntId, {
              maxItems: max,
              description:
                'only these sites (each must be reachable); empty or absent: every reachable site',
            }),
          ),
          ticketNums: Type.Optional(
            Type.Array(Type.Integer(), {
              maxItems: max,
              description: 'only these ticket numbers; empty or absent: every ticket',
            }),
          ),
        }),
      ),
    },
    { title: 'ChangeLogsRequestDto' },
  );

export const TransactionChangeLogDto = Type.Object(
  {
    TransactionID: Type.Integer(),
    LogTypeName: Type.String(),
    LogType: Type.Integer({
      description:
        '1 Main Ticket, 2 Source Regulatory, 3 Destination Regulatory, 4 Disposal Fee, 5 Service Item',
    }),
    TicketNumber: Type.Integer(),
    SiteID: Type.Integer(),
    SiteName: Type.String(),
    SiteCompany: Type.String(),
    Editor: Type.String({ description: 'who changed the record' }),
    EditorCompany: Type.String(),
    ChangeDate: DateTimeOutput,
    ChangeItems: Type.Array(
      Type.Object({
        PropertyName: Type.String(),
        OriginalValue: Type.String(),
        NewValue: Type.String(),
      }),
    ),
  },
  { title: 'TransactionChangeLogDto' },
);

/**
 * A 200 whose body is a stream (src/export/records.ts): Fastify pipes streams as they are, so the
 * schemas document the body (and the media types) without serializing it. Typed as a plain map so
 * the handler may send the stream.
 */
export type StreamedResponse = {
  description: string;
  content: Record<string, { schema: TSchema }>;
};
export const jsonOrCsv = (item: TSchema, description: string): StreamedResponse => ({
  description,
  content: {
    'application/json': { schema: Type.Array(item) },
    'text/csv': {
      schema: Type.String({
        description: 'a header line of the field names, then one line per record (RFC 4180)',
      }),
    },
  },
});
export const jsonOnly = (item: TSchema, description: string): StreamedResponse => ({
  description,
  content: { 'application/json': { schema: Type.Array(item) } },
});
