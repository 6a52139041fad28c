// A Sparkplug B edge gateway simulator: `npm run simulate-edge -- --url mqtt://… --nodes N --metrics M
// --rate R`. Each node births (NBIRTH with bdSeq, then a DBIRTH per device with every metric's name
// and alias), publishes DDATA by alias at R values per second in all, answers rebirth requests
// (NCMD Node Control/Rebirth), and with --outage-after/--outage-for drops off the broker (its will,
// NDEATH, is published), keeps measuring, and after reconnecting births again and backfills what
// it measured meanwhile as historical metrics. --print-bindings prints the provisioning document
// (sparkplugMetrics) that binds its metrics to sensors. The nodes are EdgeNode
// (sparkplug-edge-node.ts), which the tests and bench/mqtt.ts use too, through this module.

import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { EdgeNode, bindingsDocument } from './sparkplug-edge-node.js';

// Where the tests and bench/mqtt.ts have always taken them from.
export { EdgeNode, bindingsDocument };

const nodeName = (n: number) => `node-${n + 1}`;
const devicesOf = (n: number, perNode: number) =>
  Array.from({ length: perNode }, (_, d) => `dev-${n + 1}-${d + 1}`);

async function main() {
  const { values: a } = parseArgs({
    options: {
      url: { type: 'string', default: 'mqtt://127.0.0.1:1883' },
      group: { type: 'string', default: 'sim' },
      prefix: { type: 'string', default: '' },
      nodes: { type: 'string', default: '1' },
      devices: { type: 'string', default: '1' },
      metrics: { type: 'string', default: '10' },
      rate: { type: 'string', default: '100' },
      duration: { type: 'string', default: '0' },
      'outage-after': { type: 'string', default: '0' },
      'outage-for': { type: 'string', default: '10' },
      'print-bindings': { type: 'boolean', default: false },
      sensors: { type: 'string', default: '10100,10101,10102,10103,10104,10105' },
    },
  });
  const nodes = Number(a.nodes);
  const perNode = Number(a.devices);
  const metrics = Number(a.metrics);
  const shape = Array.from({ length: nodes }, (_, n) => ({
    node: nodeName(n),
    devices: devicesOf(n, perNode),
  }));
  if (a['print-bindings']) {
    const sensors = a.sensors.split(',').map(Number);
    process.stdout.write(
      `${JSON.stringify(bindingsDocument(a.group, shape, metrics, sensors), null, 2)}\n`,
    );
    return;
  }
  const sims = shape.map(
    (s) =>
      new EdgeNode({
        url: a.url,
        group: a.group,
        prefix: a.prefix,
        node: s.node,
        devices: s.devices,
        metrics,
      }),
  );
  await Promise.all(sims.map((s) => s.connect()));
  // Every tick, each device sends all its metrics; ticks are spaced to make --rate values/s in all.
  const perTick = nodes * perNode * metrics;
  const tickMs = Math.max(1, (1000 * perTick) / Number(a.rate));
  const outageAt = Number(a['outage-after']) * 1000;
  const outageMs = Number(a['outage-for']) * 1000;
  const endAt = Number(a.duration) ? Date.now() + Number(a.duration) * 1000 : Infinity;
  const started = Date.now();
  let sent = 0;
  let down = false;
  const backlog: { ts: number; values: number[][][] }[] = [];
  const valuesNow = (ts: number) =>
    sims.map((_, n) =>
      Array.from({ length: perNode }, (_, d) =>
        Array.from(
          { length: metrics },
          (_, i) => Math.round((50 + 10 * Math.sin(ts / 60_000 + n + d + i)) * 100) / 100,
        ),
      ),
    );
  process.stdout.write(
    `simulating ${nodes} node(s) x ${perNode} device(s) x ${metrics} metric(s) at ${a.rate} values/s on ${a.url} (group ${a.group})\n`,
  );
  for (;;) {
    const ts = Date.now();
    if (ts > endAt) break;
    if (
      outageAt &&
      !down &&
      !backlog.length &&
      ts - started > outageAt &&
      ts - started < outageAt + outageMs
    ) {
      down = true;
      process.stdout.write('outage: nodes disconnect (their wills, NDEATH, go out)\n');
      await Promise.all(sims.map((s) => s.vanish()));
    }
    const values = valuesNow(ts);
    if (down) {
      backlog.push({ ts, values });
      if (ts - started >= outageAt + outageMs) {
        down = false;
        process.stdout.write(
          `back: births, then ${backlog.length} tick(s) of historical backfill\n`,
        );
        await Promise.all(sims.map((s) => s.connect()));
        for (const b of backlog.splice(0))
          for (let n = 0; n < sims.length; n++)
            for (let d = 0; d < perNode; d++)
              await sims[n].data(d, b.values[n][d], { timestamp: b.ts, historical: true });
      }
    } else {
      for (let n = 0; n < sims.length; n++)
        for (let d = 0; d < perNode; d++) await sims[n].data(d, values[n][d], { timestamp: ts });
      sent += perTick;
    }
    const wait = tickMs - (Date.now() - ts);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  process.stdout.write(`sent ${sent} values\n`);
  await Promise.all(sims.map((s) => s.death()));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((err) => {
    process.stderr.write(`simulate-edge: ${err?.stack ?? err}\n`);
    process.exit(1);
  });
