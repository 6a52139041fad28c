import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { listen } from '../stream/fixtures.js';
import { until } from '../wait.js';

// HTTP hygiene: a known path asked with the wrong method is a 405 naming the allowed ones (from the
// route table, so every route is covered), unknown paths a 404 with a bounded message, and slow
// clients are cut off: half-sent headers and a trickling body close the connection (408), while a
// stream (a long response, not a long request) and an idle kept-alive connection live on.
// The timeouts are short here (0.5 s, 1 s); Node's own are 60 s and 300 s, checked every 30 s, so a
// connection closed within a test's timeout was closed by the service's settings. The tests that
// show what stays open wait for a connection started after theirs to be cut off, not for a time.

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
      settings: { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, STREAM_HEARTBEAT_MS: 200 },
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

  /** A connection that sends `text`, then one byte every 100 ms if `trickle`; what the server sent before it closed the socket. */
  async function slowClient(text: string, trickle = false) {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    let trickled = 0;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (received += d));
    const closed = new Promise<{ received: string; trickled: number }>((resolve) =>
      socket.on('close', () => resolve({ received, trickled })),
    );
    socket.write(text);
    const timer =
      trickle &&
      setInterval(() => {
        if (socket.writable) socket.write(' ', () => trickled++);
      }, 100);
    void closed.finally(() => timer && clearInterval(timer));
    return closed;
  }
  const HALF_HEADERS =
    'POST /v1/edge/logs/sensor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  const BODY_LENGTH = 200;
  const startOfBody = () =>
    `POST /v1/edge/logs/sensor HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${BODY_LENGTH}\r\n\r\n{"sensorID":`;

  it('closes a connection whose headers never finish, answering 408', async () => {
    const { received } = await slowClient(HALF_HEADERS);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    // Said before the close, so that no client sends another request on it.
    expect(received).toMatch(/\r\nConnection: close\r\n/);
  }, 30_000);

  it('closes a connection whose body trickles in past the request timeout, before the body is complete', async () => {
    const { received, trickled } = await slowClient(startOfBody(), true);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(received).toMatch(/\r\nConnection: close\r\n/);
    // Cut off while bytes were still arriving (no idle timeout did it), and before the body was whole.
    expect(trickled).toBeGreaterThan(0);
    expect(trickled).toBeLessThan(BODY_LENGTH - '{"sensorID":'.length);
  }, 30_000);

  it('keeps a stream open past the request timeout (it limits receiving the request, not the response)', async () => {
    let text = '';
    let closed = false;
    const req = request(`${base}/v1/stream?siteIds=1`, { headers: bearer(token) }, (res) => {
      expect(res.statusCode).toBe(200);
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('close', () => (closed = true));
    });
    req.end();
    await until(() => text.includes('event: snapshot'), 'the snapshot');
    // A request begun after the stream's is cut off at the request timeout...
    expect((await slowClient(startOfBody(), true)).received).toMatch(/^HTTP\/1\.1 408/);
    // ...and the stream lives on: open, its heartbeats still coming.
    expect(closed).toBe(false);
    const heartbeats = () => text.split(': heartbeat').length - 1;
    const seen = heartbeats();
    await until(() => heartbeats() > seen, 'another heartbeat');
    expect(closed).toBe(false);
    req.destroy();
  }, 30_000);

  it('keeps an idle kept-alive connection open past the headers timeout, and serves its next request', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    let closed = false;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('close', () => (closed = true));
    const ask = () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const answers = () => text.match(/HTTP\/1\.1 200/g)?.length ?? 0;
    ask();
    await until(() => answers() === 1, 'the first answer');
    // Idle from here on. A connection opened after this one went idle has its headers timed out...
    expect((await slowClient(HALF_HEADERS)).received).toMatch(/^HTTP\/1\.1 408/);
    // ...while this one, idle for longer, is still open and serves its next request.
    expect(closed).toBe(false);
    ask();
    await until(() => answers() === 2, 'the second answer');
    expect(closed).toBe(false);
    socket.destroy();
  }, 30_000);
});
