import { afterAll, expect, it } from 'vitest';
import { EdgeNode } from '../../scripts/simulate-edge.js';
import { describeWith } from '../needs.js';
import { serverStore, startServerProcess, waitFor, type Running } from '../operations/process.js';
import { until } from '../wait.js';
import { BROKER, gateway, unique } from './fixtures.js';

// Two instances on one PostgreSQL: exactly one is the Sparkplug host (the lease); when it is killed
// the other takes over (the lease expires within 8 s), births its STATE, asks the nodes it has not
// seen born to rebirth, and stores their data.

describeWith(['postgres', 'mosquitto'], 'Sparkplug host takeover between two instances', () => {
  const store = serverStore('postgres', 'mqtthost');
  const id = unique('host');
  const group = unique('g');
  const servers: Running[] = [];
  let node: EdgeNode | undefined;
  afterAll(async () => {
    await node?.close();
    for (const s of servers) s.child.kill('SIGKILL');
    await store.dispose();
  });

  const start = async (name: string) => {
    const { server, base } = await startServerProcess({
      ...store.env,
      MQTT_URL: BROKER,
      MQTT_HOST_ID: id,
      MQTT_CLIENT_ID: `${id}-${name}`,
      MQTT_TOPIC_PREFIX: `${id}/`,
      MQTT_SESSION_EXPIRY_S: '60',
    });
    servers.push(server);
    return { server, health: async () => (await (await fetch(`${base}/health`)).json()).mqtt };
  };
  const sql = <T>(text: string, params: unknown[] = []) =>
    store.admin(async (c) => {
      await c.query(`SET search_path = ${store.schema}`);
      return (await c.query(text, params)).rows as T[];
    });

  it('has one host at a time, and the other takes over when it is killed', async () => {
    await store.prepare();
    const a = await start('a');
    await waitFor(async () => ((await a.health())?.sparkplugHost ? true : undefined));
    const b = await start('b');
    await waitFor(async () => ((await b.health())?.connected ? true : undefined));
    expect(await b.health()).toEqual({ connected: true, sparkplugHost: false });
    await sql(
      `INSERT INTO sparkplug_metrics (group_id, edge_node_id, device_id, metric_name, kind, equipment_id, field)
       VALUES ($1, 'n1', 'd1', 'Sensors/S0', 'sensor', 10100, 'value')`,
      [group],
    );
    const gw = await gateway();
    const state = `${id}/spBv1.0/STATE/${id}`;
    const states: { online: boolean }[] = [];
    gw.on('message', (topic, body) => topic === state && states.push(JSON.parse(body.toString())));
    await gw.subscribeAsync(state, { qos: 1 });

    node = new EdgeNode({
      url: BROKER,
      prefix: `${id}/`,
      group,
      node: 'n1',
      devices: ['d1'],
      metrics: 1,
    });
    await node.connect();
    const T = Math.floor(Date.now() / 60_000) * 60_000 + 3_600_000;
    const stored = async (value: number) =>
      (
        await sql(`SELECT 1 FROM sensor_logs WHERE sensor_id = 10100 AND ts >= $1 AND value = $2`, [
          new Date(T).toISOString(),
          value,
        ])
      ).length === 1;
    await node.data(0, [11.5], { timestamp: T });
    await until(() => stored(11.5), 'data through the first host');

    const rebirths = node.rebirths;
    a.server.child.kill('SIGKILL');
    const killedAt = Date.now();
    await until(async () => (await b.health())?.sparkplugHost, 'the second instance to take over');
    const tookMs = Date.now() - killedAt;
    console.log(`takeover after ${tookMs} ms`);
    // The dead host's will said it went offline; the new one says it is online.
    await until(
      () => states.at(-1)?.online === true && states.some((s) => !s.online),
      'the STATE messages',
    );
    // The new host has not seen this node born: its data brings a rebirth request, then it is stored.
    await node.data(0, [12.5], { timestamp: T + 60_000 });
    await until(() => node!.rebirths > rebirths, 'the rebirth request');
    await until(
      async () => {
        await node!.data(0, [13.5], { timestamp: T + 120_000 });
        return stored(13.5);
      },
      'data through the second host',
      { every: 500 },
    );
    const [lease] = await sql<{ holder: string }>(
      `SELECT holder FROM mqtt_host_lease WHERE host_id = $1`,
      [id],
    );
    expect(lease.holder).toBe(`${id}-b`);
    await gw.endAsync();
  }, 240_000);
});
