import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { updateClient } from '../../src/auth/clients.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { listen } from './fixtures.js';

// A stream's connection after the stream ends, over a raw socket: closed by the service when the
// request asked for that (Connection: close, or HTTP/1.0 without keep-alive), else kept open and
// ready for the next request.

/** A raw HTTP/1.x connection: everything received, and whether the service closed it. */
interface Raw {
  socket: Socket;
  text: () => string;
  closed: () => boolean;
}

async function open(base: string): Promise<Raw> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('end', () => (closed = true));
  socket.on('close', () => (closed = true));
  return { socket, text: () => received, closed: () => closed };
}

const streamRequest = (token: string, version: string, connection?: string) =>
  `GET /v1/stream?siteIds=1 HTTP/${version}\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
  `Accept: text/event-stream\r\n${connection ? `Connection: ${connection}\r\n` : ''}\r\n`;

const headOf = (text: string) => text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase();
const WAIT = { timeout: 15_000, interval: 20 };

describeEachBackend('GET /v1/stream: the connection after the stream', (backend) => {
  let ctx: TestContext;
  let base: string;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 },
      settings: { STREAM_HEARTBEAT_MS: 100 },
    });
    base = await listen(ctx.app);
  });
  afterAll(async () => ctx?.close());

  /** Opens a stream on a raw socket as client `id`, waits for its snapshot, then ends it by disabling the client. */
  async function streamAndEnd(id: string, version: string, connection?: string): Promise<Raw> {
    const token = await ctx.token([1], { clientId: id });
    const raw = await open(base);
    raw.socket.write(streamRequest(token, version, connection));
    await vi.waitFor(() => expect(raw.text()).toContain('event: snapshot'), WAIT);
    await updateClient(ctx.db, id, { disabled: true });
    await vi.waitFor(() => expect(ctx.app.stream.size).toBe(0), WAIT);
    return raw;
  }

  it.each([
    ['Connection: close', '1.1', 'close'],
    ['HTTP/1.0 without keep-alive', '1.0', undefined],
  ])(
    '%s: the answer says close, and the service closes the socket when the stream ends',
    async (_, version, connection) => {
      const raw = await streamAndEnd(`closing-${version}`, version, connection);
      expect(headOf(raw.text())).toMatch(/\r\nconnection: close(\r\n|$)/);
      await vi.waitFor(() => expect(raw.closed()).toBe(true), WAIT);
    },
  );

  it('keep-alive: the socket stays usable, and the next request on it gets its own answer', async () => {
    const raw = await streamAndEnd('keeping', '1.1');
    expect(headOf(raw.text())).toMatch(/\r\nconnection: keep-alive(\r\n|$)/);
    // The stream's chunked body ended with its last chunk; the connection is still open.
    await vi.waitFor(() => expect(raw.text()).toMatch(/\r\n0\r\n\r\n$/), WAIT);
    expect(raw.closed()).toBe(false);
    const before = raw.text().length;
    raw.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await vi.waitFor(() => expect(raw.closed()).toBe(true), WAIT);
    expect(raw.text().slice(before)).toMatch(/^HTTP\/1\.1 200 /);
  });
});
