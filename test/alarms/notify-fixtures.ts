import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

// Real receivers for the notification tests: an HTTP server on localhost that checks each
// webhook's signature as a receiver would, and an SMTP server (smtp-server, the receiving side of
// the nodemailer project), both on a port the OS picks.

export interface Hook {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** Whether X-Site-Monitor-Signature is the HMAC-SHA256 of "<timestamp>.<body>" with the secret. */
  signed: boolean;
  status: number;
}

export async function webhookReceiver(secret: string) {
  const received: Hook[] = [];
  /** Statuses to answer, per path, before answering 200. */
  const failFirst = new Map<string, number[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      const ts = String(req.headers['x-site-monitor-timestamp']);
      const expected =
        'sha256=' + createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex');
      const status = failFirst.get(req.url!)?.shift() ?? 200;
      received.push({
        path: req.url!,
        headers: req.headers,
        body: JSON.parse(raw),
        signed: req.headers['x-site-monitor-signature'] === expected,
        status,
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    failFirst,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

export async function smtpReceiver() {
  const mails: Mail[] = [];
  /** SMTP reply codes to answer the next messages with, before accepting them. */
  const rejectNext: number[] = [];
  let rejected = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = rejectNext.shift();
        if (code) {
          rejected++;
          return done(Object.assign(new Error('try again later'), { responseCode: code }));
        }
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString(),
        });
        done();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    rejectNext,
    rejected: () => rejected,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
