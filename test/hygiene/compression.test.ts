import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR, count } from '../telemetry/fixtures.js';
import { until } from '../wait.js';

// Compressed request bodies: gzip, deflate and br on every JSON route, BODY_LIMIT on the
// decompressed size, decompression stopped at the limit (a zip bomb is never inflated whole),
// 415 for an encoding the service does not know, 400 for bytes that are not what they claim.

const LIMIT = 64 * 1024;
const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: gzipSync,
  'x-gzip': gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
  GZip: gzipSync,
};

describeEachBackend('compressed request bodies', (backend) => {
  let ctx: TestContext;
  let token: string;
  const send = (
    url: string,
    payload: Buffer | Readable,
    encoding?: string,
    extra: Record<string, string> = {},
  ) =>
    ctx.app.inject({
      method: 'POST',
      url,
      payload,
      headers: {
        ...bearer(token),
        'content-type': 'application/json',
        ...(encoding ? { 'content-encoding': encoding } : {}),
        ...extra,
      },
    });
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { BODY_LIMIT: LIMIT },
    });
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it('accepts gzip, deflate and br bodies (any case, x-gzip too) and stores what they hold', async () => {
    let minute = 0;
    for (const [encoding, encode] of Object.entries({ ...ENCODERS, identity: (b: Buffer) => b })) {
      const logs = Array.from({ length: 20 }, (_, i) => ({
        sensorID: SENSOR,
        value: i,
        timestamp: new Date(Date.UTC(2026, 10, 1, 0, minute++)).toISOString(),
      }));
      const res = await send('/v1/edge/logs/sensor/batch', encode(json(logs)), encoding);
      expect(res.statusCode, `${encoding}: ${res.body}`).toBe(201);
      expect(res.json()).toEqual({ received: 20, stored: 20, duplicates: 0 });
    }
    expect(
      await count(ctx.db, 'sensor_logs', `sensor_id = $1 AND ts < '2026-11-02'`, [SENSOR]),
    ).toBe(20 * 6);
    // Any JSON route: the token route and a download.
    const tok = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: brotliCompressSync(json({ clientId: 'nobody', clientSecret: 'x' })),
      headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
    });
    expect(tok.statusCode).toBe(401);
    const load = await send(
      '/v1/sensors/logs/load',
      gzipSync(
        json({
          sensorIds: [SENSOR],
          start: '2026-11-01T00:00:00Z',
          end: '2026-11-02T00:00:00Z',
          interval: 'all',
        }),
      ),
      'gzip',
    );
    expect(load.statusCode, load.body).toBe(200);
    expect(load.json()[0].count).toBe(120);
  });

  it('answers 415 for an encoding it does not know, 400 for bytes that are not what they claim', async () => {
    const body = json([{ sensorID: SENSOR, value: 1, timestamp: '2026-11-03T00:00:00Z' }]);
    for (const encoding of ['compress', 'zstd', 'gzip, br', 'bogus\u00e9']) {
      const res = await send('/v1/edge/logs/sensor/batch', gzipSync(body), encoding);
      expect(res.statusCode, encoding).toBe(415);
      expect(res.json()).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
      expect(res.json().message).toContain('Content-Encoding');
    }
    for (const [encoding, bytes] of [
      ['gzip', body],
      ['br', Buffer.from('not brotli at all')],
      ['deflate', gzipSync(body).subarray(0, 20)],
    ] as const) {
      const res = await send('/v1/edge/logs/sensor/batch', bytes, encoding);
      expect(res.statusCode, encoding).toBe(400);
      expect(res.json().message).toContain(`not valid ${encoding}`);
    }
    expect(await count(ctx.db, 'sensor_logs', `ts >= '2026-11-03' AND ts < '2026-11-04'`)).toBe(0);
  });

  it('applies BODY_LIMIT to the decompressed size', async () => {
    // A batch a little under the limit once decompressed is stored; one a little over is 413, though both are small compressed.
    const batch = (n: number) =>
      json(
        Array.from({ length: n }, (_, i) => ({
          sensorID: SENSOR,
          value: i,
          timestamp: new Date(Date.UTC(2026, 10, 4, 0, 0, 0, i)).toISOString(),
        })),
      );
    let n = 1;
    while (batch(n * 2).length < LIMIT) n *= 2;
    while (batch(n + 1).length <= LIMIT) n++;
    expect(batch(n).length).toBeLessThanOrEqual(LIMIT);
    const under = await send('/v1/edge/logs/sensor/batch', gzipSync(batch(n)), 'gzip');
    expect(under.statusCode, under.body).toBe(201);
    const over = batch(n + 1);
    expect(over.length).toBeGreaterThan(LIMIT);
    for (const [encoding, encode] of Object.entries(ENCODERS)) {
      const compressed = encode(over);
      expect(compressed.length).toBeLessThan(LIMIT / 4);
      const res = await send('/v1/edge/logs/sensor/batch', compressed, encoding);
      expect(res.statusCode, encoding).toBe(413);
      expect(res.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    }
  });

  it('stops inflating a zip bomb at the limit: 413, and the rest of the body is never read', async () => {
    // An endless body: gzip members of 1 MiB of zeros each (about 1 KB compressed), one after another.
    const member = gzipSync(Buffer.alloc(1 << 20));
    let produced = 0;
    const endless = new Readable({
      read() {
        produced++;
        this.push(member);
      },
    });
    const res = await send('/v1/edge/logs/sensor/batch', endless, 'gzip', {
      'transfer-encoding': 'chunked',
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toContain('larger than the limit');
    expect(res.headers.connection).toBe('close');
    // Reading stopped: the request stream is paused with nobody reading it, and it and the endless
    // source have filled their buffers, so nothing asks the source for more. (Had decompression gone
    // on, the request would flow and its buffer be drained as fast as the source fills it.)
    const req = res.raw.req as unknown as Readable;
    expect(req.readableFlowing).toBe(false);
    expect(req.listenerCount('data')).toBe(0);
    await until(
      () =>
        req.readableLength >= req.readableHighWaterMark &&
        endless.readableLength >= endless.readableHighWaterMark,
      'the buffers to fill',
    );
    const atRest = produced;
    expect(produced).toBeLessThan(64);
    // The service goes on answering, and meanwhile reads nothing more of the endless body.
    const ok = await send(
      '/v1/edge/logs/sensor',
      gzipSync(json({ sensorID: SENSOR, value: 1, timestamp: '2026-11-05T00:00:00Z' })),
      'gzip',
    );
    expect(ok.statusCode).toBe(201);
    expect(produced).toBe(atRest);
    endless.destroy();
  });
});
