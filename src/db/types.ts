import type { PrimaryFigures } from './primary.js';

export type Row = Record<string, unknown>;

export interface QueryOptions {
  /**
   * The statement is sent often with this very text (the upload writer's): PostgreSQL keeps it
   * parsed and planned on each connection (a named prepared statement) instead of planning it every
   * time. Only for a bounded set of texts. PGlite ignores it.
   */
  prepared?: boolean;
  /**
   * The statement reads in index order and stops early (a keyset page, a LIMIT): it is planned without
   * sorts or bitmap scans (INDEX_ORDER), whatever the table statistics say. Without statistics (a
   * table never analyzed, a new partition, right after a bulk load) the planner takes a range for a
   * few hundred rows and may fetch all of it by bitmap and sort it to return the first rows: a page of
   * 5,000 rows then costs as much as the whole range. Not with `prepared` (a cached plan would keep
   * whichever settings it was first planned under).
   */
  indexOrder?: boolean;
}

/** Anything SQL can be sent to: the database itself or an open transaction. Values are always $n parameters. */
export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
}

/** An open transaction; exec runs a parameterless script of several statements (migrations). */
export interface Transaction extends Queryable {
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * The same database, where every call (a query; a transaction or snapshot from taking a connection
   * to its commit) ends within ms of its start: past that it rejects with DatabaseTimeout, its
   * statement is cancelled and its connection dropped, never left holding a pool slot. The database
   * connect() returns is unbounded (migrations, the CLI); request paths use bounded views.
   */
  bounded(ms: number): Database;
  /** Runs fn inside BEGIN/COMMIT; a throw rolls everything back. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Runs fn in a read-only REPEATABLE READ transaction: every query in it sees the same committed
   * state, however many commits happen meanwhile. Its queries run one after another on one connection.
   */
  snapshot<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a script of several statements without parameters (migrations only). */
  exec(sql: string): Promise<void>;
  /**
   * Calls onNotify with the payload of every NOTIFY of the channel (an SQL identifier, lower case)
   * until the returned function is called; also with '' after each (re)connection, as notices may
   * have been missed meanwhile.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Calls waiting for a pooled connection right now (PostgreSQL's pool; the metrics report it). Absent
   * where there is no pool (PGlite: calls wait in its own queue instead).
   */
  poolWaiting?(): number;
  /**
   * Failovers the pool went through and the time it had no writable primary, since it opened
   * (src/db/primary.ts; the metrics report them). Absent on the embedded database.
   */
  primary?(): PrimaryFigures;
  close(): Promise<void>;
}
