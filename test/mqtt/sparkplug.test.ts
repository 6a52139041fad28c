import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { readSnapshot } from '../../src/stream/snapshot.js';
import { DataType, decodePayload, encodePayload } from '../../src/mqtt/sparkplug/codec.js';
import { EdgeNode, bindingsDocument } from '../../scripts/simulate-edge.js';
import { until } from '../wait.js';
import { BROKER, describeMqtt, gateway, mqttSuite, unique } from './fixtures.js';

// The Sparkplug B host (contract 14) against the real broker, driven by the gateway simulator:
// births teach aliases, data by alias and by name becomes logs and readings, historical metrics
// only logs, a seq gap, an unknown alias and data without birth cause a rebirth request, deaths
// and births are `edge` events, and what cannot be read or is not bound is counted, never stored.

const SENSORS = [10100, 10101]; // site 1; metric 2 of the device is left unbound
const PUMP = 10401;
/** An hour ahead: newer than the births' values (of now), so data at T0 and after is the current value. */
const T0 = Math.floor(Date.now() / 60_000) * 60_000 + 3_600_000;

describeMqtt('Sparkplug B host', (backend) => {
  const t = mqttSuite(backend, { MQTT_REORDER_MS: 300 });
  const group = unique('g');
  let node: EdgeNode;
  let gw: MqttClient;

  const sensorLogs = (id: number) =>
    t.ctx.db.query<{ ts: Date; value: number }>(
      `SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts`,
      // The births' values are of now: only the data sent at T0 and after.
      [id, new Date(T0).toISOString(), new Date(T0 + 86_400_000).toISOString()],
    );
  const current = async (id: number) =>
    (
      await t.ctx.db.query<{ record: { value: number; timestamp: string } }>(
        `SELECT record FROM current_readings WHERE equipment_kind = 'sensor' AND equipment_id = $1`,
        [id],
      )
    )[0]?.record;
  const edgeEvents = () =>
    t.ctx.db
      .query<{ data: string }>(
        `SELECT data FROM stream_events WHERE type = 'edge' ORDER BY xid, id`,
      )
      .then((rows) => rows.map((r) => JSON.parse(r.data)));

  beforeAll(async () => {
    await importDocument(t.ctx.db, {
      sparkplugMetrics: [
        ...bindingsDocument(group, [{ node: 'n1', devices: ['d1'] }], 2, SENSORS).sparkplugMetrics,
        {
          GroupID: group,
          EdgeNodeID: 'n1',
          MetricName: 'Pump/Pressure',
          SitePumpID: PUMP,
          Field: 'pressure',
        },
        {
          GroupID: group,
          EdgeNodeID: 'n1',
          DeviceID: null,
          MetricName: 'Pump/Running',
          SitePumpID: PUMP,
          Field: 'running',
        },
      ],
    });
    gw = await gateway();
    // The host's STATE birth, retained: it is subscribed and online.
    const state = `${t.prefix}spBv1.0/STATE/${t.settings.MQTT_HOST_ID}`;
    const online = new Promise<Record<string, unknown>>((resolve) =>
      gw.on('message', (topic, body) => topic === state && resolve(JSON.parse(body.toString()))),
    );
    await gw.subscribeAsync(state, { qos: 1 });
    expect(await online).toMatchObject({ online: true, timestamp: expect.any(Number) });
    node = new EdgeNode({
      url: BROKER,
      prefix: t.prefix,
      group,
      node: 'n1',
      devices: ['d1'],
      metrics: 3,
    });
    await node.connect();
  });
  afterAll(async () => {
    await node?.close();
    await gw?.endAsync();
  });

  it('announces the births of the node and its device as edge events of the site', async () => {
    await until(async () => (await edgeEvents()).length >= 2, 'the birth events');
    expect(await edgeEvents()).toEqual([
      { siteId: 1, groupId: group, edgeNodeId: 'n1', deviceId: null, online: true },
      { siteId: 1, groupId: group, edgeNodeId: 'n1', deviceId: 'd1', online: true },
    ]);
  });

  it('stores data by alias as logs and readings, and ignores the unbound metric', async () => {
    const ignored = await t.counted('ignored');
    await node.data(0, [1.5, 2.5, 99], { timestamp: T0 });
    await until(async () => (await sensorLogs(SENSORS[1])).length === 1, 'the logs');
    expect((await sensorLogs(SENSORS[0])).map((r) => r.value)).toEqual([1.5]);
    expect(await current(SENSORS[0])).toMatchObject({
      value: 1.5,
      timestamp: new Date(T0).toISOString(),
    });
    // On the live stream as an upload's: a reading event, and a logs event.
    const events = await t.ctx.db.query<{ type: string; data: string }>(
      `SELECT type, data FROM stream_events WHERE type IN ('reading', 'logs') ORDER BY xid, id`,
    );
    expect(events.map((e) => ({ type: e.type, ...JSON.parse(e.data) }))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'reading',
          siteId: 1,
          kind: 'sensor',
          record: { sensorID: SENSORS[0], value: 1.5, timestamp: new Date(T0).toISOString() },
        }),
        expect.objectContaining({
          type: 'logs',
          siteId: 1,
          kind: 'sensor',
          from: new Date(T0).toISOString(),
        }),
      ]),
    );
    // The unbound metric alone: nothing stored, the message counted as ignored.
    await node.data(0, [undefined, undefined, 7], { timestamp: T0 + 1000 });
    await until(async () => (await t.counted('ignored')) > ignored, 'the ignored message');
  });

  it('stores data by name, and historical data as logs only', async () => {
    await node.data(0, [3.5], { timestamp: T0 + 60_000, byName: true });
    await until(async () => (await sensorLogs(SENSORS[0])).length === 2, 'the log by name');
    await node.data(0, [4.5], { timestamp: T0 + 120_000, historical: true });
    await until(async () => (await sensorLogs(SENSORS[0])).length === 3, 'the historical log');
    expect((await sensorLogs(SENSORS[0])).map((r) => r.value)).toEqual([1.5, 3.5, 4.5]);
    // The newer historical value is not the current one.
    expect(await current(SENSORS[0])).toMatchObject({ value: 3.5 });
  });

  it('makes one record of the metrics of one equipment with one timestamp', async () => {
    await node.nodeData(
      [
        { name: 'Pump/Pressure', datatype: DataType.Float, value: 4.25 },
        { name: 'Pump/Running', datatype: DataType.Boolean, value: true },
      ],
      T0,
    );
    const rows = () =>
      t.ctx.db.query(`SELECT pressure, running FROM pump_logs WHERE pump_id = $1 AND ts = $2`, [
        PUMP,
        new Date(T0).toISOString(),
      ]);
    await until(async () => (await rows()).length === 1, 'the pump log');
    expect(await rows()).toEqual([{ pressure: 4.25, running: true }]);
  });

  it('puts messages that arrive out of seq order back in order within the reorder window', async () => {
    const rebirths = node.rebirths;
    const s = node.seq;
    node.seq = (s + 1) % 256; // the later message first
    await node.data(0, [undefined, 21.5], { timestamp: T0 + 150_000 });
    node.seq = s;
    await node.data(0, [undefined, 20.5], { timestamp: T0 + 140_000 });
    node.seq = (s + 2) % 256;
    await until(
      async () => (await sensorLogs(SENSORS[1])).filter((r) => r.value > 20).length === 2,
      'both messages stored',
    );
    expect(node.rebirths).toBe(rebirths);
  });

  it('drops a message after a seq gap and asks the node to rebirth (NCMD)', async () => {
    const rebirths = node.rebirths;
    node.skipSeq();
    await node.data(0, [5.5], { timestamp: T0 + 180_000 });
    await until(() => node.rebirths > rebirths, 'the rebirth request');
    // The node births again (the simulator answers NCMD); its data is stored again.
    await until(async () => (await edgeEvents()).length >= 4, 'the rebirth events');
    await node.data(0, [6.5], { timestamp: T0 + 240_000 });
    await until(
      async () => (await sensorLogs(SENSORS[0])).some((r) => r.value === 6.5),
      'data after rebirth',
    );
    expect((await sensorLogs(SENSORS[0])).map((r) => r.value)).not.toContain(5.5);
  });

  it('asks for a rebirth on an unknown alias, and on data from a node never born', async () => {
    const rebirths = node.rebirths;
    const events = (await edgeEvents()).length;
    await node.data(0, [undefined, undefined, undefined, 8]); // alias 4: not in the birth
    await until(() => node.rebirths > rebirths, 'the rebirth request (alias)');

    const ncmd = `${t.prefix}spBv1.0/${group}/NCMD/stranger`;
    const asked = new Promise<Buffer>((resolve) =>
      gw.on('message', (topic, body) => topic === ncmd && resolve(body)),
    );
    await gw.subscribeAsync(ncmd, { qos: 0 });
    await gw.publishAsync(
      `${t.prefix}spBv1.0/${group}/NDATA/stranger`,
      Buffer.from(
        encodePayload({ timestamp: Date.now(), seq: 3, metrics: [{ name: 'x', value: 1 }] }),
      ),
    );
    const command = decodePayload(await asked);
    expect(command.metrics).toMatchObject([{ name: 'Node Control/Rebirth', value: true }]);
    // The node answered the first request: its births are in.
    await until(async () => (await edgeEvents()).length >= events + 2, 'the rebirth');
  });

  it('announces deaths: DDEATH for the device, the NDEATH will for the node, and births again', async () => {
    const before = (await edgeEvents()).length;
    await node.deviceDeath(0);
    const deviceDeath = {
      siteId: 1,
      groupId: group,
      edgeNodeId: 'n1',
      deviceId: 'd1',
      online: false,
    };
    // (A rebirth the previous test asked for may still add its births meanwhile.)
    await until(
      async () => (await edgeEvents()).slice(before).some((e) => !e.online && e.deviceId === 'd1'),
      'the device death',
    );
    expect((await edgeEvents()).slice(before)).toContainEqual(deviceDeath);
    await node.vanish(); // the broker publishes its will, NDEATH with this session's bdSeq
    await until(
      async () =>
        (await edgeEvents()).some((e, i) => i > before && e.deviceId === null && !e.online),
      'the node death',
    );
    // The service keeps the latest state of each: the site's snapshot shows both offline.
    const edgeOf = async () =>
      (await readSnapshot(t.ctx.db, [1], 10)).sites[0].Edge.filter((e) => e.groupId === group);
    await until(async () => (await edgeOf()).every((e) => !e.online), 'both offline');
    const dead = await edgeOf();
    expect(
      dead.map(({ edgeNodeId, deviceId, online }) => ({ edgeNodeId, deviceId, online })),
    ).toEqual([
      { edgeNodeId: 'n1', deviceId: null, online: false },
      { edgeNodeId: 'n1', deviceId: 'd1', online: false },
    ]);
    const n = (await edgeEvents()).length;
    await node.connect();
    await until(async () => (await edgeEvents()).length >= n + 2, 'the births');
    expect((await edgeEvents()).slice(n).map((e) => e.online)).toEqual([true, true]);
    // Online again, since the births (later than the deaths).
    const alive = await edgeOf();
    expect(alive.map((e) => e.online)).toEqual([true, true]);
    for (const [i, e] of alive.entries())
      expect(Date.parse(e.since)).toBeGreaterThanOrEqual(Date.parse(dead[i].since));
  });

  it('counts a payload that is not Sparkplug as malformed and goes on', async () => {
    const malformed = await t.counted('malformed');
    await gw.publishAsync(
      `${t.prefix}spBv1.0/${group}/DDATA/n1/d1`,
      Buffer.from([0xff, 0xff, 0xff, 0x01]),
    );
    await until(async () => (await t.counted('malformed')) > malformed, 'the malformed count');
    await node.data(0, [7.5], { timestamp: T0 + 300_000 });
    await until(
      async () => (await sensorLogs(SENSORS[0])).some((r) => r.value === 7.5),
      'data after it',
    );
  });
});
