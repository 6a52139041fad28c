import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';
import { listen } from './fixtures.js';

// A client that stops reading (its socket is paused, so the kernel buffers fill and then the
// server's writes wait) while a site keeps uploading: its readings are coalesced per pump (the
// latest wins, never an older after a newer), so memory stays bounded; with a bound too small for
// one reading of every pump, its stream is ended instead and the server keeps nothing of it.

const PUMPS = 100;
const FIRST_PUMP = 10401; // demo ids: site * 10000 + 400 + n
const STATUS = 'x'.repeat(200); // ~370 bytes a reading event: ~10 MB for the rounds below
const ROUNDS = 280;

/** A raw SSE connection whose reading can be paused; frames are parsed as they are read. */
function stalledClient(base: string, token: string) {
  const frames: { event: string; data: any }[] = [];
  let res!: IncomingMessage;
  let text = '';
  let ended = false;
  const opened = new Promise<void>((resolve, reject) => {
    request(`${base}/v1/stream?siteIds=1`, { headers: bearer(token) }, (r) => {
      res = r;
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => {
        text += chunk;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) frames.push({ event, data: JSON.parse(data) });
        }
      });
      r.on('end', () => (ended = true));
      r.on('close', () => (ended = true));
      resolve();
    })
      .on('error', reject)
      .end();
  });
  return {
    frames,
    opened,
    pause: () => res.pause(),
    resume: () => res.resume(),
    ended: () => ended,
  };
}

describeEachBackend('GET /v1/stream: a client that stops reading', (backend) => {
  const contexts: TestContext[] = [];
  afterAll(async () => {
    for (const c of contexts) await c.close();
  });
  async function start(maxBuffer: number) {
    const ctx = await startApp(backend, {
      demo: { sites: 1, pumpsPerSite: PUMPS, transactionsPerSite: 0, imagesPerSite: 0 },
      settings: { STREAM_MAX_BUFFER: maxBuffer },
    });
    contexts.push(ctx);
    return { ctx, base: await listen(ctx.app), token: await ctx.token() };
  }
  /** Round r: a reading of every pump, value r, times increasing with r. */
  async function upload(ctx: TestContext, token: string, rounds: number) {
    const t0 = Date.now() - 3_600_000;
    for (let r = 1; r <= rounds; r++) {
      const readings = Array.from({ length: PUMPS }, (_, i) => ({
        sitePumpID: FIRST_PUMP + i,
        frequency: r,
        status: STATUS,
        timestamp: new Date(t0 + r * 1000).toISOString(),
      }));
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/edge/readings/pump/batch',
        headers: bearer(token),
        payload: { readings },
      });
      expect(res.statusCode).toBe(201);
    }
  }

  /** A client that gets its snapshot, stops reading while every pump reports `ROUNDS` times, then reads again. */
  async function stallThroughUploads(app: Awaited<ReturnType<typeof start>>) {
    const client = stalledClient(app.base, app.token);
    await client.opened;
    await until(() => client.frames.length > 0, 'the snapshot');
    client.pause();
    await upload(app.ctx, app.token, ROUNDS);
    const streams = app.ctx.app.stream.size;
    client.resume();
    return { client, streams };
  }
  /** Each pump's readings as received: never an older after a newer. */
  function expectInOrder(frames: { event: string; data: any }[]) {
    const readings = frames.filter((f) => f.event === 'reading').map((f) => f.data.record);
    const latest = new Map<number, number>();
    for (const r of readings) {
      expect(r.frequency).toBeGreaterThan(latest.get(r.sitePumpID) ?? 0);
      latest.set(r.sitePumpID, r.frequency);
    }
    return readings;
  }

  let slow: Awaited<ReturnType<typeof start>>;
  let small: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    slow = await start(1 << 20);
    small = await start(16 * 1024);
  });

  it('coalesces its readings per pump, the latest winning, and never sends an older one after a newer', async () => {
    const { client } = await stallThroughUploads(slow);
    const last = () =>
      new Set(
        client.frames
          .filter((f) => f.data.record?.frequency === ROUNDS)
          .map((f) => f.data.record.sitePumpID),
      );
    await until(
      () => last().size === PUMPS,
      () => `every pump's last round (got ${client.frames.length} frames, ${last().size} pumps)`,
    );
    const readings = expectInOrder(client.frames);
    // Fewer than were uploaded: the client fell behind and readings were replaced while queued.
    expect(readings.length).toBeLessThan(ROUNDS * PUMPS);
    expect(client.ended()).toBe(false);
    expect(slow.ctx.app.stream.size).toBe(1);
  });

  it('ends the stream of a client that falls further behind than the bound, and keeps nothing of it', async () => {
    const { client, streams } = await stallThroughUploads(small);
    expect(streams).toBe(0);
    await until(() => client.ended(), 'the stream to end');
    // What it got before the end is in order: a prefix of the rounds for each pump.
    expectInOrder(client.frames);
  });
});
