import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/index.js';
import { keysetPages, pagesInTurn, rowPages, type KeysetPage } from '../../src/db/pager.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A table of keys 1..n read like the downloads read theirs: the rows after a key, in order, at most limit. */
function table(n: number, opts: { delay?: number; failAfter?: number } = {}) {
  const keys = Array.from({ length: n }, (_, i) => i + 1);
  const log: string[] = [];
  let running = 0;
  let mostRunning = 0;
  const read = async (after: number | undefined, limit: number) => {
    log.push(`read ${after ?? 'first'}`);
    running++;
    mostRunning = Math.max(mostRunning, running);
    try {
      await sleep(opts.delay ?? 1);
      if (opts.failAfter !== undefined && after === opts.failAfter)
        throw new Error(`read after ${after} failed`);
      const rows = keys.filter((k) => after === undefined || k > after).slice(0, limit);
      log.push(`read ${after ?? 'first'} done`);
      return { page: rows, rows: rows.length, last: rows[rows.length - 1] } as KeysetPage<
        number,
        number[]
      >;
    } finally {
      running--;
    }
  };
  return { read, log, mostRunning: () => mostRunning };
}

describe('keyset pager', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('yields every page in key order, each read after the last key of the one before, until a short page', async () => {
    const t = table(10);
    const pages: number[][] = [];
    for await (const page of keysetPages(4, t.read)) pages.push(page);
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
    expect(t.log.filter((l) => !l.endsWith('done'))).toEqual(['read first', 'read 4', 'read 8']);
  });

  it('reads once more after a full last page, and yields no empty page', async () => {
    const t = table(8);
    const pages: number[][] = [];
    for await (const page of keysetPages(4, t.read)) pages.push(page);
    expect(pages).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(t.log.filter((l) => !l.endsWith('done'))).toEqual(['read first', 'read 4', 'read 8']);
    const empty: number[][] = [];
    for await (const page of keysetPages(4, table(0).read)) empty.push(page);
    expect(empty).toEqual([]);
  });

  it('reads the next page while the consumer works on the current one, one read at a time', async () => {
    const t = table(12, { delay: 5 });
    const seen: string[] = [];
    for await (const page of keysetPages(3, t.read)) {
      // The read of the next page started before this page was handed over.
      seen.push(t.log[t.log.length - 1]);
      await sleep(20); // the consumer is slower than a read: the read ahead ends meanwhile
      seen.push(t.log[t.log.length - 1]);
      expect(page).toHaveLength(3);
    }
    expect(seen).toEqual([
      'read 3',
      'read 3 done',
      'read 6',
      'read 6 done',
      'read 9',
      'read 9 done',
      'read 12',
      'read 12 done',
    ]);
    expect(t.mostRunning()).toBe(1);
  });

  it('throws a failed read when its page is due, after the pages before it, without an unhandled rejection', async () => {
    const t = table(10, { failAfter: 4 });
    const pages: number[][] = [];
    const it = keysetPages(2, t.read);
    await expect(
      (async () => {
        for await (const page of it) {
          pages.push(page);
          await sleep(10); // the read ahead fails while this page is being sent
        }
      })(),
    ).rejects.toThrow('read after 4 failed');
    expect(pages).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await sleep(10);
    expect(unhandled).toEqual([]);
    expect((await it.next()).done).toBe(true);
  });

  it('stops reading when the consumer stops: the read under way ends unawaited, its failure unreported', async () => {
    const t = table(100, { failAfter: 2, delay: 5 });
    const pages: number[][] = [];
    for await (const page of keysetPages(2, t.read)) {
      pages.push(page);
      break;
    }
    expect(pages).toEqual([[1, 2]]);
    await sleep(30);
    // The page read ahead (after key 2) was asked for, and failed; nothing after it was asked.
    expect(t.log).toEqual(['read first', 'read first done', 'read 2']);
    expect(unhandled).toEqual([]);

    const quiet = table(100);
    const it = keysetPages(10, quiet.read);
    expect((await it.next()).value).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await it.return(undefined);
    await sleep(10);
    expect(quiet.log.filter((l) => !l.endsWith('done'))).toEqual(['read first', 'read 10']);
    expect((await it.next()).done).toBe(true);
  });

  it('yields the pages of several sources in turn, every page of each, an empty source none', async () => {
    const a = table(5, { delay: 5 });
    const b = table(3, { delay: 5 });
    const c = table(0);
    const d = table(2);
    const pages: number[][] = [];
    for await (const page of pagesInTurn([a, b, c, d].map((t) => () => keysetPages(2, t.read))))
      pages.push(page);
    // Every page of each source, sources in order; an empty source yields nothing.
    expect(pages).toEqual([[1, 2], [3, 4], [5], [1, 2], [3], [1, 2]]);
    expect(d.log).toEqual(['read first', 'read first done', 'read 2', 'read 2 done']);
  });

  it('reads sources side by side, and stops both when the consumer stops', async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const source = (name: string) => () =>
      keysetPages<number, number[]>(1, async (after) => {
        log.push(`${name} ${after ?? 'first'}`);
        most = Math.max(most, ++running);
        await sleep(5);
        running--;
        const k = (after ?? 0) + 1;
        return { page: [k], rows: 1, last: k };
      });
    const it = pagesInTurn([source('a'), source('b'), source('c')]);
    expect((await it.next()).value).toEqual([1]);
    expect((await it.next()).value).toEqual([2]);
    // a's pages and b's first page were read at once.
    expect(most).toBe(2);
    expect(log).toContain('b first');
    await it.return(undefined);
    const asked = log.length;
    await sleep(30);
    // After the stop no read starts (a and b each had one read under way at most), and c never.
    expect(log.length).toBeLessThanOrEqual(asked + 2);
    expect(log.some((l) => l.startsWith('c'))).toBe(false);
    expect(unhandled).toEqual([]);
  });

  it('reads the rows of a statement: the first page, then after the key sent as the parameters that follow', async () => {
    const table = Array.from({ length: 7 }, (_, i) => ({ day: `d${Math.floor(i / 2)}`, id: i }));
    const calls: [string, unknown[]][] = [];
    const db: Queryable = {
      async query<T>(sql: string, params: unknown[] = []) {
        calls.push([sql, params]);
        const [limit, day, id] = params as [number, string?, number?];
        const after = (r: (typeof table)[number]) =>
          day === undefined || r.day > day || (r.day === day && r.id > id!);
        return table.filter(after).slice(0, limit) as T[];
      },
    };
    const pages: string[][] = [];
    for await (const page of rowPages(db, 3, {
      sql: (after) => (after ? 'NEXT' : 'FIRST'),
      params: [3],
      keyOf: (r: (typeof table)[number]): [string, number] => [r.day, r.id],
      page: (rows) => rows.map((r) => `${r.day}/${r.id}`),
    }))
      pages.push(page);
    expect(pages).toEqual([['d0/0', 'd0/1', 'd1/2'], ['d1/3', 'd2/4', 'd2/5'], ['d3/6']]);
    expect(calls).toEqual([
      ['FIRST', [3]],
      ['NEXT', [3, 'd1', 2]],
      ['NEXT', [3, 'd2', 5]],
    ]);
  });
});
