import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { until } from '../wait.js';
import { freePort, runTs, runToEnd, startServerProcess, waitFor, type Running } from './process.js';

// The real server, over HTTP: first start on a fresh embedded database, restart, shutdown on SIGTERM.

/** Bytes of every file under a directory. */
const sizeOf = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? sizeOf(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );

const json = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
};

describeWith(['pglite'], 'the server process (embedded database)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'site-monitor-'));
  let server: Running | undefined;
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    // Its info logs (stdout) say when a request arrives and when the shutdown begins.
    const started = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    server = started.server;
    return started.base;
  };

  it('seeds demo data on first start, prints the demo credentials once, and serves them', async () => {
    const base = await start();
    const out = server!.stdout();
    const secret = /clientSecret:\s+(\S+)/.exec(out)?.[1];
    expect(secret, out).toBeTruthy();
    const token = await json(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
    });
    expect(token.status).toBe(200);
    const sites = await json(`${base}/v1/sites?page=1&perPage=10`, {
      headers: { authorization: `Bearer ${token.body.accessToken}` },
    });
    expect(sites.status).toBe(200);
    expect(sites.body.total).toBeGreaterThanOrEqual(3);
    // Logs are JSON lines and never carry the secret.
    expect(server!.stderr()).not.toContain(secret);
    // Each step of the start is logged with its milliseconds; the demo's statistics are gathered
    // once the server answers.
    const stepsLine = /"ms":(\{[^}]*\}),"msg":"started: milliseconds of each step"/;
    await until(() => stepsLine.test(server!.stdout()), 'the steps of the start');
    const steps = stepsLine.exec(server!.stdout())?.[1];
    expect(Object.keys(JSON.parse(steps ?? '{}'))).toEqual(
      expect.arrayContaining(['open', 'migrate', 'configuration', 'history', 'rollups', 'listen']),
    );
    await until(() => server!.stdout().includes('demo data statistics gathered'), 'the statistics');
    // The demo data directory stays small (the 90 days of history, rollups and log files included).
    expect(sizeOf(dataDir)).toBeLessThan(100 * 1024 * 1024);

    // The CLI refuses to open the embedded database while the server has it...
    const cli = await runToEnd('cli.ts', ['client', 'list'], { DATA_DIR: dataDir });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('in use');
    // ...so the demo client, an admin, administers the running service over HTTP; the banner says how to recover its secret.
    expect(out).toContain('client rotate-secret demo');
    const admin = {
      'content-type': 'application/json',
      authorization: `Bearer ${token.body.accessToken}`,
    };
    const created = await json(`${base}/v1/admin/clients`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ clientId: 'gw', siteIds: [1] }),
    });
    expect(created.status).toBe(201);
    const gw = await json(`${base}/token`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ clientId: 'gw', clientSecret: created.body.clientSecret }),
    });
    expect(gw.status).toBe(200);
    const disabled = await json(`${base}/v1/admin/clients/gw`, {
      method: 'PATCH',
      headers: admin,
      body: JSON.stringify({ disabled: true }),
    });
    expect(disabled.status).toBe(200);
    expect(
      (
        await fetch(`${base}/v1/sites?page=1&perPage=1`, {
          headers: { authorization: `Bearer ${gw.body.accessToken}` },
        })
      ).status,
    ).toBe(401);

    // SIGTERM with a request in flight: the request is answered, then the process exits 0.
    const logged = (...parts: string[]) =>
      server!
        .stdout()
        .split('\n')
        .filter((line) => parts.every((p) => line.includes(p))).length;
    const tokenRequests = logged('incoming request', '"url":"/token"');
    const url = new URL(`${base}/token`);
    const inflight = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: '/token',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.write('{"clientId":"demo",');
      // Once the server has the request (its body not complete), SIGTERM; once the shutdown has
      // begun, the rest of the body.
      until(() => logged('incoming request', '"url":"/token"') > tokenRequests, 'the request')
        .then(() => {
          server!.child.kill('SIGTERM');
          return until(() => logged('shutting down') > 0, 'the shutdown to begin');
        })
        .then(() => req.end(`"clientSecret":${JSON.stringify(secret)}}`), reject);
    });
    expect(await inflight).toBe(200);
    expect(await server!.exited).toBe(0);

    // Restart: the data and the signing secret are kept, the credentials are not printed again.
    const again = await start();
    expect(server!.stdout()).not.toContain('clientSecret');
    const still = await json(`${again}/v1/sites?page=1&perPage=1`, {
      headers: { authorization: `Bearer ${token.body.accessToken}` },
    });
    expect(still.status).toBe(200);
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
  }, 180_000);
});

describeWith(['postgres'], 'the server process (PostgreSQL)', () => {
  it('starts on DATABASE_URL, seeds with DEMO=1 and serves tokens and sites', async () => {
    const pg = await import('pg');
    const schema = `srv_${Date.now()}`;
    const admin = new pg.default.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const port = await freePort();
    const server = runTs('server.ts', [], {
      DATABASE_URL: url.toString(),
      DEMO: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => ((await fetch(`${base}/health`)).ok ? true : undefined));
      const secret = /clientSecret:\s+(\S+)/.exec(server.stdout())?.[1];
      const token = await json(`${base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
      });
      expect(token.status).toBe(200);
      const health = await json(`${base}/health`);
      expect(health.body.database).toBe('postgres');
      const sites = await json(`${base}/v1/sites?page=1&perPage=10`, {
        headers: { authorization: `Bearer ${token.body.accessToken}` },
      });
      expect(sites.body.total).toBeGreaterThanOrEqual(3);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
