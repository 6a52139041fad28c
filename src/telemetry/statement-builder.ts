import { numericArray, type NumericArrayType } from '../db/array-params.js';

// What the parts of the upload statement (statement.ts) add to as they are built: its parameters,
// its CTEs in order, and the queries that tell what it stored per job and kind.

export interface Statement {
  sql: string;
  params: unknown[];
}

/** Number and boolean arrays go in binary on PostgreSQL, as literals on PGlite (array-params.ts). */
const LITERAL_TYPES = new Set(['int4[]', 'float8[]', 'boolean[]']);

/** Timestamps travel as epoch milliseconds (float8, exact for every accepted time) and become timestamptz in SQL. */
export const TS = 'to_timestamp(t / 1000)';

export class StatementBuilder {
  readonly params: unknown[] = [];
  readonly ctes: string[] = [];
  /** Queries of the rows the statement stored, each yielding (job, kind). */
  readonly counted: string[] = [];

  /** `binary`: numeric arrays as binary parameters (PostgreSQL; PGlite takes none). */
  constructor(private readonly binary: boolean) {}

  /** Adds an array parameter; returns its placeholder, cast to `type`. */
  param(value: unknown[], type: string): string {
    this.params.push(
      LITERAL_TYPES.has(type)
        ? numericArray(value as (number | boolean | null)[], type as NumericArrayType, this.binary)
        : value,
    );
    return `$${this.params.length}::${type}`;
  }
}
