import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { listen } from '../stream/fixtures.js';
import { until } from '../wait.js';

// Answers given before any route runs are in the error body too: a path parameter too long (414),
// a path that is not valid percent-encoding (400), headers too large (431) and a request not
// received in time (408). No `code` key, no echo of the path; the last two end the connection, and
// say so (`Connection: close`), so a client never sends its next request on a dropped socket.

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;
const BODY_KEYS = ['error', 'message', 'statusCode'];

/** A raw HTTP/1.1 answer: status, headers (lower-case names), parsed body. */
function parseAnswer(text: string) {
  const [head, body] = [
    text.slice(0, text.indexOf('\r\n\r\n')),
    text.slice(text.indexOf('\r\n\r\n') + 4),
  ];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describeEachBackend('answers of the router and the HTTP parser', (backend) => {
  let ctx: TestContext;
  let token: string;
  let port: number;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS },
    });
    token = await ctx.token('*');
    port = Number(new URL(await listen(ctx.app)).port);
  });
  afterAll(async () => ctx?.close());

  it('answers 414 URI Too Long for a 10 KB path parameter, without repeating it', async () => {
    const long = 'x'.repeat(10_000);
    for (const [method, url] of [
      ['GET', `/v1/config/sensors/${long}`],
      ['PATCH', `/v1/admin/clients/${long}`],
    ] as const) {
      const res = await ctx.app.inject({ method, url, headers: bearer(token), payload: {} });
      expect(res.statusCode).toBe(414);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(BODY_KEYS);
      expect(body).toMatchObject({ statusCode: 414, error: 'URI Too Long' });
      expect(body.message).toMatch(/too long \(at most 100 characters/);
      expect(body.message).not.toContain('xxxxxxxxxx');
      expect(res.body.length).toBeLessThan(300);
    }
  });

  it('answers 400 for a path that is not valid percent-encoding, without a code key', async () => {
    for (const url of ['/v1/config/sensors/%', '/v1/config/sensors/%ff', '/v1/%', '/v1/%ff']) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: bearer(token) });
      expect(res.statusCode, url).toBe(400);
      const body = res.json();
      expect(Object.keys(body).sort(), url).toEqual(BODY_KEYS);
      expect(body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: "the request's path is not valid percent-encoding",
      });
    }
  });

  /** A kept-alive connection that has served one request: what it receives, and whether it closed. */
  async function servedConnection() {
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const state = { text: '', closed: false };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (state.text += d));
    socket.on('error', () => {});
    socket.on('close', () => (state.closed = true));
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => state.text.includes('"status"'), 'the first answer');
    expect(state.text).toMatch(/^HTTP\/1\.1 200/);
    expect(state.text.toLowerCase()).toContain('connection: keep-alive');
    state.text = '';
    return { socket, state };
  }

  /** The answer on a served connection to `second`: in the error body, with Connection: close, and the server closes it. */
  async function expectClosingAnswer(second: string, status: number, error: string) {
    const { socket, state } = await servedConnection();
    socket.write(second);
    await until(() => state.closed, 'the server to close the connection');
    const answer = parseAnswer(state.text);
    expect(answer.status).toBe(status);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(answer.body).sort()).toEqual(BODY_KEYS);
    expect(answer.body).toMatchObject({ statusCode: status, error });
    expect(answer.body.message.length).toBeLessThan(300);
    return answer.body.message as string;
  }

  it('answers 431 with Connection: close on a kept-alive connection, and closes it', async () => {
    const message = await expectClosingAnswer(
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'Request Header Fields Too Large',
    );
    expect(message).toMatch(/larger than [0-9]+ bytes/);
    expect(message).not.toContain('aaaa');
  }, 30_000);

  it('answers 408 with Connection: close when the next request never finishes its headers, and closes it', async () => {
    const message = await expectClosingAnswer(
      'GET /health HTTP/1.1\r\nHost: x\r\n',
      408,
      'Request Timeout',
    );
    expect(message).toContain(`headers within ${HEADERS_TIMEOUT_MS} ms`);
  }, 30_000);

  it('answers 400 with Connection: close to bytes that are not HTTP', async () => {
    await expectClosingAnswer('NOT HTTP AT ALL\r\n\r\n', 400, 'Bad Request');
  }, 30_000);
});
