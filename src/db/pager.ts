import type { Queryable } from './types.js';

// Keyset paging for the downloads: a result of any size is read a page at a time in the order of an
// index, each page starting after the key of the last row of the one before (`WHERE (k1, k2) >
// ($a, $b) ORDER BY k1, k2 LIMIT n`), so no page costs more than the first and no transaction or
// connection is held while the client reads. The next page is asked of the database as soon as the
// current one is here, while the current one is encoded and sent: the two overlap, and memory holds
// at most two pages. Each page is read with QueryOptions.indexOrder: its cost follows the rows it
// returns whatever the table statistics say (a page is never a sort of the whole remaining range).

/** A page as read: what the pager yields for it, how many rows it holds, and the key of its last row. */
export interface KeysetPage<K, P> {
  page: P;
  /** Rows in the page; fewer than the limit: it is the last. */
  rows: number;
  /** The key of the last row, after which the next page starts; undefined for an empty page. */
  last: K | undefined;
}

/**
 * Reads the page of at most `limit` rows that follows `after` in key order: the first page when
 * `after` is undefined. The query orders by the key and stops at `limit` rows.
 */
export type ReadPage<K, P> = (after: K | undefined, limit: number) => Promise<KeysetPage<K, P>>;

/**
 * The pages of a keyset read, in order, until one holds fewer than `limit` rows; empty pages are not
 * yielded. One page is read ahead: the read of the next one starts before the current one is
 * yielded. A read that fails throws when its page's turn comes. A consumer that stops (return, or
 * a break out of for await) stops the reading: no read starts after that, and the one already under
 * way is left to end on its own, its result and error ignored.
 */
export async function* keysetPages<K, P>(limit: number, read: ReadPage<K, P>): AsyncGenerator<P> {
  let next: Promise<KeysetPage<K, P>> | undefined = ahead(read(undefined, limit));
  while (next) {
    const current: KeysetPage<K, P> = await next;
    next =
      current.rows >= limit && current.last !== undefined
        ? ahead(read(current.last, limit))
        : undefined;
    if (current.rows) yield current.page;
  }
}

/**
 * The pages of each source in turn (keyset reads of consecutive ranges), the next source's first page
 * read while the current source's pages are read and sent: two reads at once, on two connections. A
 * consumer that stops stops both sources.
 */
export async function* pagesInTurn<P>(sources: (() => AsyncGenerator<P>)[]): AsyncGenerator<P> {
  const begin = (k: number) => {
    if (k >= sources.length) return undefined;
    const pages = sources[k]();
    return { pages, first: ahead(pages.next()) };
  };
  let current = begin(0);
  let upcoming: ReturnType<typeof begin>;
  try {
    for (let k = 0; current; k++) {
      upcoming = begin(k + 1);
      for (let r = await current.first; !r.done; r = await current.pages.next()) yield r.value;
      current = upcoming;
      upcoming = undefined;
    }
  } finally {
    for (const open of [current, upcoming]) open?.pages.return(undefined).catch(() => {});
  }
}

/**
 * A read under way while an earlier page is sent: its failure is handled here, so that it is not an
 * unhandled rejection when nobody awaits it any more (the consumer stopped); awaiting it still throws.
 */
function ahead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/** A keyset read of one SQL statement (see rowPages). */
export interface RowPages<R, K extends unknown[], P> {
  /** The statement: the first page (`after` false), or the page after the key (`after` true). */
  sql: (after: boolean) => string;
  /** Its parameters; the parts of the key follow them (as $n+1, $n+2…) when reading after one. */
  params: unknown[];
  /** The key of a row, in the statement's order. */
  keyOf: (row: R) => K;
  /** What a page of rows is yielded as. */
  page: (rows: R[]) => P;
}

/** keysetPages over the rows of a statement whose LIMIT is `limit`. */
export function rowPages<R, K extends unknown[], P>(
  db: Queryable,
  limit: number,
  q: RowPages<R, K, P>,
): AsyncGenerator<P> {
  return keysetPages<K, P>(limit, async (after) => {
    const rows = await db.query<R>(q.sql(!!after), after ? [...q.params, ...after] : q.params, {
      indexOrder: true,
    });
    return {
      page: q.page(rows),
      rows: rows.length,
      last: rows.length ? q.keyOf(rows[rows.length - 1]) : undefined,
    };
  });
}
