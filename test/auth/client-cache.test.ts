import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientCache } from '../../src/auth/client-cache.js';
import type { Client } from '../../src/auth/clients.js';
import { DatabaseTimeout } from '../../src/db/deadline.js';

// The cache of verified clients in front of every authenticated request: one read per client and
// TTL, a bounded size (least recently used out first), and, while the clients table cannot be read
// in time, the record verified a moment ago rather than a stalled service.

const client = (clientId: string, admin = false): Client => ({
  clientId,
  siteIds: null,
  cameraIds: [],
  admin,
  role: 'full',
  disabled: false,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A clients table whose reads are counted, and can be made to fail, or to answer only at their deadline (300 ms). */
function table() {
  const state = { reads: [] as string[], mode: 'ok' as 'ok' | 'down' | 'stuck', admin: false };
  const read = async (id: string) => {
    state.reads.push(id);
    if (state.mode === 'down') throw new DatabaseTimeout(100);
    if (state.mode === 'stuck')
      return sleep(300).then(() => Promise.reject(new DatabaseTimeout(300)));
    return client(id, state.admin);
  };
  return { state, read };
}

// The cache's clock (Date.now) and its timers are Vitest's fake ones: time passes when a test says so.
describe('client cache', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads a client once per TTL, and once for requests that ask together', async () => {
    const { state, read } = table();
    const cache = new ClientCache(read, 200);
    await Promise.all(Array.from({ length: 10 }, () => cache.get('a')));
    await cache.get('a');
    expect(state.reads).toEqual(['a']);
    vi.advanceTimersByTime(199);
    await cache.get('a');
    expect(state.reads).toEqual(['a']);
    vi.advanceTimersByTime(1);
    state.admin = true;
    expect((await cache.get('a'))?.admin).toBe(true);
    expect(state.reads).toEqual(['a', 'a']);
  });

  it('holds at most maxCached clients, the least recently used going first', async () => {
    const { state, read } = table();
    const cache = new ClientCache(read, 60_000, { maxCached: 3, staleMs: 60_000, waitMs: 50 });
    for (const id of ['a', 'b', 'c']) await cache.get(id);
    await cache.get('a'); // a is now the most recently used
    await cache.get('d'); // b goes
    state.reads.length = 0;
    for (const id of ['a', 'c', 'd', 'b']) await cache.get(id);
    expect(state.reads).toEqual(['b']);
  });

  it('uses a recently verified record while the table cannot be read, and not an old one', async () => {
    const { state, read } = table();
    const cache = new ClientCache(read, 50, { maxCached: 100, staleMs: 600, waitMs: 100 });
    await cache.get('a');
    vi.advanceTimersByTime(80); // past the TTL: the record is read again
    state.mode = 'stuck';
    let answer: unknown = 'none yet';
    const asked = cache.get('a').then((c) => (answer = c));
    await vi.advanceTimersByTimeAsync(99);
    expect(answer).toBe('none yet');
    await vi.advanceTimersByTimeAsync(1);
    // At its patience (waitMs, 100 ms), while the read is stuck (it fails at 300 ms): the cached record.
    expect(answer).toMatchObject({ clientId: 'a' });
    expect(state.reads).toEqual(['a', 'a']);
    await asked;
    await vi.advanceTimersByTimeAsync(200); // the stuck read fails
    state.mode = 'down';
    expect(await cache.get('a')).toMatchObject({ clientId: 'a' });
    // Never seen: nothing to fall back on.
    await expect(cache.get('b')).rejects.toBeInstanceOf(DatabaseTimeout);
    // Past staleMs (600 ms since it was read) the record is not trusted any more.
    vi.advanceTimersByTime(600 - 380);
    await expect(cache.get('a')).rejects.toBeInstanceOf(DatabaseTimeout);
  });

  it('reads every time with a TTL of 0', async () => {
    const { state, read } = table();
    const cache = new ClientCache(read, 0);
    await cache.get('a');
    await cache.get('a');
    expect(state.reads).toEqual(['a', 'a']);
  });
});
