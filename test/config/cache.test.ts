import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConfigIndex } from '../../src/config/assemble.js';
import { CachedBody, ConfigCache } from '../../src/config/cache.js';
import { emptyConfig } from '../../src/config/data.js';
import { acceptsGzip, bodyEncoding } from '../../src/config/encoding.js';

// The configuration cache on its own: fingerprint checks shared only with requests that arrived
// before the check started, bodies and indexes valid for exactly one fingerprint.

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('ConfigCache', () => {
  it('runs one fingerprint query per site at a time; callers arriving meanwhile share the next one', async () => {
    const cache = new ConfigCache();
    const queries: ReturnType<typeof deferred<string>>[] = [];
    const query = () => {
      const d = deferred<string>();
      queries.push(d);
      return d.promise;
    };
    const a = cache.fingerprint(1, query);
    const b = cache.fingerprint(1, query);
    const c = cache.fingerprint(1, query);
    const other = cache.fingerprint(2, query);
    expect(queries).toHaveLength(2); // site 1 and site 2, nothing more yet
    queries[0].resolve('v1');
    expect(await a).toBe('v1');
    await tick();
    expect(queries).toHaveLength(3); // b and c wait for a query started after they arrived
    const d = cache.fingerprint(1, query); // arrives while that one runs: waits for the one after
    queries[2].resolve('v2');
    expect([await b, await c]).toEqual(['v2', 'v2']);
    await tick();
    expect(queries).toHaveLength(4);
    queries[3].resolve('v3');
    expect(await d).toBe('v3');
    queries[1].resolve('s2');
    expect(await other).toBe('s2');
  });

  it('passes a failed check on to its callers and recovers with the next one', async () => {
    const cache = new ConfigCache();
    let n = 0;
    const failing = cache.fingerprint(1, async () => {
      n++;
      throw new Error('database down');
    });
    const waiting = cache.fingerprint(1, async () => `ok${++n}`);
    await expect(failing).rejects.toThrow('database down');
    expect(await waiting).toBe('ok2');
  });

  it('keeps bodies and indexes for exactly the fingerprint they were made under, and loads a site once for concurrent misses', async () => {
    const cache = new ConfigCache();
    cache.setBody('k', 'f1', new CachedBody(Buffer.from('{"a":1}')));
    expect(cache.body('k', 'f1')?.raw.toString()).toBe('{"a":1}');
    expect(cache.body('k', 'f2')).toBeUndefined();
    let loads = 0;
    let state = 'f1';
    const load = async () => {
      loads++;
      return { fingerprint: state, index: new ConfigIndex(emptyConfig()) };
    };
    const indexOf = async (fp: string) => (await cache.index(1, fp, load))!.index;
    const [x, y] = await Promise.all([indexOf('f1'), indexOf('f1')]);
    expect(x).toBe(y);
    expect(await indexOf('f1')).toBe(x);
    expect(loads).toBe(1);
    expect(await indexOf('f2')).not.toBe(x);
    expect(loads).toBe(2);
    // A load that finds a newer state than asked for is kept under the state it read.
    state = 'f4';
    const newer = await cache.index(1, 'f3', load);
    expect(newer!.fingerprint).toBe('f4');
    expect(await indexOf('f4')).toBe(newer!.index);
    expect(loads).toBe(3);
    // A site that is gone is not cached.
    expect(await cache.index(1, 'f5', async () => (loads++, undefined))).toBeUndefined();
  });

  it('gzips a body once, and reads Accept-Encoding', async () => {
    const body = new CachedBody(
      Buffer.from(JSON.stringify({ registers: Array(100).fill('x'.repeat(50)) })),
    );
    const z = await body.gzip();
    expect(await body.gzip()).toBe(z);
    expect(gunzipSync(z).equals(body.raw)).toBe(true);
    expect(await body.encoded('gzip')).toBe(z);
    expect(await body.encoded('identity')).toBe(body.raw);
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ['gzip', true],
      ['deflate, GZIP', true],
      ['br;q=1, gzip;q=0.5', true],
      ['gzip;q=0', false],
      ['identity', false],
      ['x-gzip', false],
    ];
    for (const [header, expected] of cases) {
      expect(acceptsGzip(header), String(header)).toBe(expected);
      expect(bodyEncoding(header), String(header)).toBe(expected ? 'gzip' : 'identity');
    }
  });
});
