import { createServer, connect, type Server, type Socket } from 'node:net';

// A TCP proxy in front of PostgreSQL that can break a connection at the worst moment, as a failover
// does: armed 'after', it forwards the next commit whole (a statement on its own up to its Sync or a
// simple Query; in a transaction its COMMIT) and then cuts the client off, so the server commits
// while the client never hears back;
// armed 'before', it cuts the connection instead of forwarding that statement (nothing reaches the
// server). Messages are read by the protocol's framing: the startup message, then type + length.

export type Cut = 'before' | 'after';

export class CutProxy {
  private armed: Cut | undefined;
  /** Connections cut so far. */
  cuts = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<CutProxy> {
    const made: { proxy?: CutProxy } = {};
    const server = createServer((client) => made.proxy!.pipe(client, target));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    made.proxy = new CutProxy(server, (server.address() as { port: number }).port);
    return made.proxy;
  }

  /** The next statement sent through the proxy (any connection) is cut as `how` says. */
  arm(how: Cut): void {
    this.armed = how;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }

  private pipe(client: Socket, target: { host: string; port: number }): void {
    const server = connect(target);
    for (const s of [client, server]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {});
    }
    server.on('data', (d) => client.destroyed || client.write(d));
    server.on('close', () => client.destroy());
    client.on('close', () => server.end());
    let pending = Buffer.alloc(0);
    let startup = true;
    let executed = false;
    let inTransaction = false;
    client.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      let at = 0;
      for (;;) {
        if (startup) {
          if (pending.length - at < 4 || pending.length - at < pending.readInt32BE(at)) break;
          at += pending.readInt32BE(at);
          startup = false;
          continue;
        }
        if (pending.length - at < 5) break;
        const type = String.fromCharCode(pending[at]);
        const end = at + 1 + pending.readInt32BE(at + 1);
        if (pending.length < end) break;
        if (this.armed === 'before' && (type === 'E' || type === 'Q')) {
          this.fired();
          server.destroy();
          client.destroy();
          return;
        }
        const text = type === 'Q' ? pending.toString('utf8', at + 5, end - 1).trimStart() : '';
        const begins = /^BEGIN/i.test(text);
        const ends = /^(COMMIT|ROLLBACK)/i.test(text);
        if (this.armed === 'after') {
          if (type === 'E') executed = true;
          // The end of a transaction: a COMMIT in one, else a statement on its own (Sync, simple Query).
          const commits = inTransaction
            ? ends
            : (type === 'S' && executed) || (type === 'Q' && !begins);
          if (commits) {
            this.fired();
            server.end(pending.subarray(0, end)); // the server gets it all, then the end of the stream
            client.destroy();
            return;
          }
        }
        if (begins) inTransaction = true;
        if (ends) inTransaction = false;
        at = end;
      }
      if (at) server.write(pending.subarray(0, at));
      pending = pending.subarray(at);
    });
  }

  private fired(): void {
    this.armed = undefined;
    this.cuts++;
  }
}
