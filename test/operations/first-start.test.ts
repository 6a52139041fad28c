import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { until } from '../wait.js';
import { freePort, runTs, startServerProcess, type Running } from './process.js';

// A first start that fails after the demo data is made (here: the metrics port is held by another
// process) still shows the demo client's secret, which is shown only once; the next start, which
// seeds nothing, is signed in to with it.

describeWith(['pglite'], 'a first start that fails', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'site-monitor-first-'));
  let holder: Server | undefined;
  let server: Running | undefined;
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await new Promise((resolve) => (holder ? holder.close(resolve) : resolve(undefined)));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the demo secret before it exits, and the next start accepts it', async () => {
    const busy = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder!.listen(busy, '127.0.0.1', resolve));

    const failed = runTs('server.ts', [], {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(busy),
    });
    expect(await failed.exited).toBe(1);
    expect(failed.stderr()).toContain(`cannot serve metrics on 127.0.0.1:${busy}`);
    const secret = /clientSecret:\s+(\S+)/.exec(failed.stdout())?.[1];
    expect(secret, failed.stdout()).toBeTruthy();
    expect(failed.stdout()).toContain('did not start');

    // The next start finds the demo data in place, seeds nothing and prints no new secret; it gathers
    // the statistics the failed one left due, once it has answered.
    const started = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    server = started.server;
    expect(server.stdout()).not.toContain('clientSecret');
    const res = await fetch(`${started.base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
    });
    expect(res.status).toBe(200);
    await until(() => server!.stdout().includes('demo data statistics gathered'), 'the statistics');
  }, 300_000);
});
