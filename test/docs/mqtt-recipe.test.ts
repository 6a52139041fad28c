import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeWith } from '../needs.js';
import { freePort, ROOT, waitFor } from '../operations/process.js';

// docs/mqtt.md's "Trying it: the gateway simulator" recipe, run as written: its shell block, line by
// line, from the repository's root, after the first `npm start` it asks for. Only the environment
// is the test's own (a fresh DATA_DIR, free ports), so that it touches nothing of the developer's. It
// needs the broker the recipe names (Mosquitto at 127.0.0.1:1883), and runs with the embedded database
// (the recipe's own), so not in a run that leaves it out (TEST_BACKENDS=postgres).

const DOC = join(ROOT, 'docs/mqtt.md');

/** The recipe's commands: its sh block, continuation lines joined, comments dropped. */
function recipe(): string[] {
  const doc = readFileSync(DOC, 'utf8');
  const section = doc.slice(doc.indexOf('## Trying it: the gateway simulator'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

interface Shell {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

describeWith(['mosquitto', 'pglite'], 'the gateway simulator recipe of docs/mqtt.md', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'site-monitor-recipe-'));
  const bindings = join(ROOT, 'bindings.json');
  const kept = `${bindings}.before-recipe-test`;
  const running: Shell[] = [];
  let env: Record<string, string> = {};

  /** Runs one line with sh from the repository's root, in a process group of its own. */
  const sh = (command: string): Shell => {
    const child = spawn('sh', ['-c', command], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const shell = { child, out: () => out, exited };
    running.push(shell);
    return shell;
  };
  /** Whether any process of the line's group is still there (npm's children outlive its shell). */
  const alive = (s: Shell) => {
    try {
      process.kill(-s.child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** Stops every process of the line, the server's own shutdown included (it releases DATA_DIR). */
  const stop = async (s: Shell) => {
    if (!alive(s)) return;
    process.kill(-s.child.pid!, 'SIGTERM');
    await waitFor(() => (alive(s) ? undefined : true), 20_000).catch(() => {
      if (alive(s)) process.kill(-s.child.pid!, 'SIGKILL');
    });
  };

  afterAll(async () => {
    for (const s of running) await stop(s);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(bindings, { force: true });
    if (existsSync(kept)) renameSync(kept, bindings);
  }, 60_000);

  it('runs as written: bindings printed as JSON, imported with the server stopped, then the simulator stores values', async () => {
    const commands = recipe();
    expect(commands).toHaveLength(4);
    if (existsSync(bindings)) renameSync(bindings, kept);
    const port = await freePort();
    env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    const base = `http://127.0.0.1:${port}`;
    const up = () => waitFor(async () => ((await fetch(`${base}/health`)).ok ? true : undefined));

    // The first `npm start`: the demo data, and its client's secret.
    const first = sh('npm start');
    await up();
    const secret = await waitFor(() => /clientSecret:\s+(\S+)/.exec(first.out())?.[1]);
    await stop(first);

    // 1: the bindings, printed into bindings.json: a JSON document and nothing else.
    const [print, importIt, start, simulate] = commands;
    expect(await sh(print).exited).toBe(0);
    const doc = JSON.parse(readFileSync(bindings, 'utf8'));
    expect(doc.sparkplugMetrics.length).toBeGreaterThan(0);

    // 2: imported with the server stopped.
    const imported = sh(importIt);
    expect(await imported.exited, imported.out()).toBe(0);

    // 3 and 4: the server with MQTT, then the simulator; its values become the sensors' current values.
    const server = sh(start);
    await up();
    const began = Date.now();
    sh(simulate);
    const token = (
      await (
        await fetch(`${base}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
        })
      ).json()
    ).accessToken as string;
    const bound = new Set<number>(
      doc.sparkplugMetrics.map((m: { SiteSensorID?: number }) => m.SiteSensorID).filter(Boolean),
    );
    const fresh = await waitFor(async () => {
      const sites = (
        await (
          await fetch(`${base}/v1/sites?page=1&perPage=100&dataType=additional`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()
      ).data as { Current?: { sensors?: { sensorID: number; timestamp: string }[] } }[];
      const updated = sites
        .flatMap((s) => s.Current?.sensors ?? [])
        .filter((r) => bound.has(r.sensorID) && Date.parse(r.timestamp) >= began - 1000);
      return updated.length ? updated : undefined;
    }, 60_000);
    expect(fresh.length).toBeGreaterThan(0);
    expect(server.child.exitCode).toBeNull();
  }, 240_000);
});
