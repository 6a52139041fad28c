import type { Queryable } from '../db/index.js';
import type { Values } from '../export/records.js';

// What the ticket downloads have in common: records of a time range, read a page at a time.

export const PAGE_SIZE = 1000;

/** Pages of one download's records (each in its fields' order) until its range is exhausted. */
export type RecordPages<Q> = (db: Queryable, q: Q, pageSize?: number) => AsyncGenerator<Values[]>;

/** A range [start, end) as statement parameters: ISO text, which the statements read as timestamptz. */
export const rangeParams = (q: { start: number; end: number }): [string, string] => [
  new Date(q.start).toISOString(),
  new Date(q.end).toISOString(),
];
