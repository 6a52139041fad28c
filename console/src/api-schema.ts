import type { components, paths } from './api-types.js';

// The API's shapes as the console names them: aliases of the types generated from the service's
// OpenAPI document (api-types.ts, `npm run openapi:types`), so a changed DTO fails the console's
// type check instead of the page. Types only: nothing here reaches the bundle.

type Schemas = components['schemas'];

export type Site = Schemas['Site'];
export type SitePage = Schemas['SitePage'];
/** The site record of a light configuration. */
export type SiteRecord = Schemas['SiteRecordLight'];
export type SiteConfig = Schemas['SiteConfigDtoLight'];
export type Alarm = Schemas['ActiveAlarmDto'];
export type Severity = Alarm['Severity'];
export type Ticket = Schemas['TransactionLogDto'];
export type TicketChange = Schemas['TransactionChangeLogDto'];
export type ErrorBody = Schemas['ErrorBody'];

/** Equipment kinds, as the stream and the download routes name them. */
export type Kind = Schemas['StreamReadingDto']['kind'];
/** Bucket widths of the summary downloads. */
export type Interval = NonNullable<Schemas['SensorLogsLoadDto']['interval']>;
/** How summary averages are taken: mean of the samples, or mean over time (contract 13). */
export type CalculationBasis = NonNullable<Schemas['SensorLogsLoadDto']['calculationBasis']>;
/** A stored sample of the plot values of a sensor (first, last, min and max of each part). */
export type SensorPlotValue = Schemas['SensorPlotValueDto'];
export type SensorSummary = Schemas['SensorLogSummaryDto'];
export type MeterSummary = Schemas['MeterLogSummaryDto'];
export type PumpSummary = Schemas['PumpLogSummaryDto'];
export type TankSummary = Schemas['TankLogSummaryDto'];

/** The data of each event of GET /v1/stream, by event name (the document gives their union). */
export interface StreamEvents {
  snapshot: Schemas['StreamSnapshotDto'];
  reading: Schemas['StreamReadingDto'];
  logs: Schemas['StreamLogsDto'];
  alarm: Schemas['StreamAlarmDto'];
  config: Schemas['StreamConfigDto'];
  edge: Schemas['StreamEdgeDto'];
}

// Calls by path: what the document says each GET and POST takes and answers (api.ts uses these).

type Operation = { parameters: { query?: unknown }; requestBody?: unknown; responses: object };
type PathsWith<M extends 'get' | 'post'> = {
  [P in keyof paths]: paths[P][M] extends Operation ? P : never;
}[keyof paths];
type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
type Answer<O> = O extends { responses: { 200: infer R } } ? Json<R> : never;

export type GetPath = PathsWith<'get'>;
export type PostPath = PathsWith<'post'>;
type Get<P extends GetPath> = paths[P]['get'];
type Post<P extends PostPath> = paths[P]['post'];

/** The query of a GET (undefined where it takes none). */
export type GetQuery<P extends GetPath> = Get<P>['parameters']['query'];
/** The JSON answer (200) of a GET. */
export type GetAnswer<P extends GetPath> = Answer<Get<P>>;
/** The JSON body of a POST. */
export type PostBody<P extends PostPath> = Json<NonNullable<Post<P>['requestBody']>>;
/** The JSON answer (200) of a POST (never where it answers otherwise, e.g. a zip). */
export type PostAnswer<P extends PostPath> = Answer<Post<P>>;
