import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between the service and its database that can black-hole the network: while it
 * does, nothing passes either way and nothing is closed, as when a link or a firewall silently
 * drops packets. On restore, what was held goes through in order (TCP would resend it).
 */
export class BlackHoleProxy {
  private forwarding = true;
  private held: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => this.sockets.delete(s));
      }
      const pass = (action: () => void) => (this.forwarding ? action() : this.held.push(action));
      client.on('data', (d) => pass(() => upstream.write(d)));
      upstream.on('data', (d) => pass(() => client.write(d)));
      client.on('close', () => pass(() => upstream.destroy()));
      upstream.on('close', () => pass(() => client.destroy()));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  blackHole(): void {
    this.forwarding = false;
  }

  restore(): void {
    this.forwarding = true;
    this.held.splice(0).forEach((action) => action());
  }

  async close(): Promise<void> {
    this.restore();
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
