import { describe, expect, it } from 'vitest';
import { prefetched } from '../../src/telemetry/download/index.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('prefetched pages of a download', () => {
  it('yields every page in order with at most `ahead` loads under way', async () => {
    let running = 0;
    let most = 0;
    const load = async (n: number) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, (5 - n) * 3)); // later pages finish first
      running--;
      return n * 10;
    };
    const got: number[] = [];
    for await (const page of prefetched([0, 1, 2, 3, 4], load, 2)) {
      got.push(page);
      await tick();
    }
    expect(got).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
  });

  it('throws a failed page when its turn comes, without an unhandled rejection while an earlier one is sent', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const load = async (n: number) => {
        if (n === 1) throw new Error('page 1 failed');
        await tick();
        return n;
      };
      const it = prefetched([0, 1, 2], load, 2);
      expect((await it.next()).value).toBe(0);
      await tick(); // page 1 has failed meanwhile
      await tick();
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
