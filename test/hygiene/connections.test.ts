import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { listen, sleep } from '../stream/fixtures.js';

// HTTP hygiene: a known path asked with the wrong method is a 405 naming the allowed ones (from the
// route table, so every route is covered), unknown paths a 404 with a bounded message, and slow
// clients are cut off: half-sent headers and a trickling body close the connection within seconds,
// while a stream (a long response, not a long request) lives on.

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;

describeEachBackend('methods, unknown paths and slow clients', (backend) => {
  let ctx: TestContext;
  let token: string;
  let base: string;
  let port: number;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      config: { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, STREAM_HEARTBEAT_MS: 200 },
    });
    token = await ctx.token('*');
    base = await listen(ctx.app);
    port = Number(new URL(base).port);
  });
  afterAll(async () => ctx?.close());

  it('answers 405 with Allow and the error body for a known path and another method, on every route', async () => {
    const ALL = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    const routes = ctx.app.routeTable();
    expect(routes.length).toBeGreaterThan(80);
    for (const route of routes) {
      const url = route.url.replace(/:[A-Za-z]+/g, '1').replace('*', 'x');
      const wrong = ALL.find((m) => !route.methods.includes(m))!;
      const res = await ctx.app.inject({ method: wrong as 'PUT', url, headers: bearer(token) });
      expect(res.statusCode, `${wrong} ${url}`).toBe(405);
      const allow = String(res.headers.allow).split(', ');
      for (const m of route.methods) expect(allow, `${wrong} ${url}`).toContain(m);
      expect(res.json()).toMatchObject({ statusCode: 405, error: 'Method Not Allowed' });
      expect(res.json().message).toContain(`${wrong} is not allowed`);
    }
    const del = await ctx.app.inject({
      method: 'DELETE',
      url: '/v1/sites/?page=1',
      headers: bearer(token),
    });
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
    expect(del.headers['x-ratelimit-limit']).toBeDefined();
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/v1/edge/logs/sensor', headers: bearer(token) }))
        .headers.allow,
    ).toBe('POST');
    expect(
      (await ctx.app.inject({ method: 'DELETE', url: '/v1/admin/clients' })).headers.allow,
    ).toBe('GET, HEAD, POST');
  });

  it('answers 404 for unknown paths, with a message of bounded length', async () => {
    for (const url of [
      '/v1/nothing',
      '/v1/config/sensors/1/extra',
      `/v1/${'x'.repeat(8000)}`,
      '/v1/edge/logs/sensor/batch/more',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: bearer(token) });
      expect(res.statusCode, url.slice(0, 50)).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
      expect(res.json().message.length).toBeLessThan(300);
      expect(res.headers.allow).toBeUndefined();
    }
  });

  /** Resolves with what the server sent and how long until it closed the socket. */
  function closedAfter(socket: Socket): Promise<{ ms: number; text: string }> {
    const t0 = Date.now();
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    return new Promise((resolve) =>
      socket.on('close', () => resolve({ ms: Date.now() - t0, text })),
    );
  }

  it('closes a connection whose headers never finish', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const closed = closedAfter(socket);
    socket.write(
      'POST /v1/edge/logs/sensor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n',
    );
    const { ms, text } = await closed;
    // Without the timeout the connection stays open for a minute or more; the bound is generous for a busy machine.
    expect(ms).toBeLessThan(6000);
    expect(text).toMatch(/^HTTP\/1\.1 408/);
  }, 15_000);

  it('closes a connection whose body trickles in past the request timeout', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const closed = closedAfter(socket);
    socket.write(
      `POST /v1/edge/logs/sensor HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"sensorID":`,
    );
    const timer = setInterval(() => socket.writable && socket.write(' '), 100);
    const { ms } = await closed;
    clearInterval(timer);
    expect(ms).toBeLessThan(8000);
  }, 15_000);

  it('keeps a stream open long past the request timeout (it limits receiving the request, not the response)', async () => {
    let text = '';
    let closed = false;
    const req = request(`${base}/v1/stream?siteIds=1`, { headers: bearer(token) }, (res) => {
      expect(res.statusCode).toBe(200);
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('close', () => (closed = true));
    });
    req.end();
    await sleep(REQUEST_TIMEOUT_MS * 3);
    const late = text.length;
    await sleep(600);
    expect(closed).toBe(false);
    expect(text).toContain('event: snapshot');
    // Heartbeats still arrive after three request timeouts.
    expect(text.length).toBeGreaterThan(late);
    req.destroy();
  }, 15_000);

  it('keeps an idle kept-alive connection open past the headers timeout, and serves its next request', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    let closed = false;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('close', () => (closed = true));
    const ask = () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    ask();
    await sleep(HEADERS_TIMEOUT_MS * 4);
    expect(closed).toBe(false);
    ask();
    await sleep(500);
    expect(text.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    socket.destroy();
  }, 15_000);
});
