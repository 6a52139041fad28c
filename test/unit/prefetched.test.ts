import { describe, expect, it } from 'vitest';
import { prefetched } from '../../src/telemetry/download/index.js';
import { signal } from '../wait.js';

/** One turn of the event loop: every promise that can settle has settled (no timer involved). */
const settle = () => new Promise((r) => setImmediate(r));

describe('prefetched pages of a download', () => {
  it('yields every page in order with at most `ahead` loads under way', async () => {
    // Each load waits for the test to finish it: the later pages are finished first.
    const loads = new Map<number, ReturnType<typeof signal<number>>>();
    let most = 0;
    const load = (n: number) => {
      loads.set(n, signal<number>());
      most = Math.max(most, loads.size);
      return loads.get(n)!.promise;
    };
    const got: number[] = [];
    let done = false;
    const reading = (async () => {
      for await (const page of prefetched([0, 1, 2, 3, 4], load, 2)) got.push(page);
      done = true;
    })();
    while (!done) {
      await settle();
      expect(loads.size).toBeLessThanOrEqual(2);
      const under = [...loads.keys()].sort((a, b) => b - a);
      for (const n of under) {
        loads.get(n)!.resolve(n * 10);
        loads.delete(n);
        await settle();
      }
      if (!under.length) break;
    }
    await reading;
    expect(got).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
  });

  it('throws a failed page when its turn comes, without an unhandled rejection while an earlier one is sent', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const first = signal<number>();
      const load = async (n: number) => {
        if (n === 1) throw new Error('page 1 failed');
        return n === 0 ? first.promise : n;
      };
      const it = prefetched([0, 1, 2], load, 2);
      const next = it.next();
      // Page 1 has failed while page 0 is still being loaded; the event loop goes round (an
      // unhandled rejection would be reported now).
      await settle();
      await settle();
      first.resolve(0);
      expect((await next).value).toBe(0);
      await settle();
      await expect(it.next()).rejects.toThrow('page 1 failed');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('asks nothing for no items', async () => {
    const pages: unknown[] = [];
    for await (const p of prefetched([], async () => 1)) pages.push(p);
    expect(pages).toEqual([]);
  });
});
