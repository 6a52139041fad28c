// One simulated Sparkplug B edge node (the gateway simulator's, the tests' and bench/mqtt.ts's):
// its births (NBIRTH with bdSeq, a DBIRTH per device with every metric's name and alias), DDATA by
// alias or by name, deaths (its will, or NDEATH of its own), rebirths on request (NCMD Node
// Control/Rebirth); and the provisioning document that binds its metrics to sensors.

import mqtt, { type MqttClient } from 'mqtt';
import { DataType, encodePayload, type Metric } from '../src/mqtt/sparkplug/codec.js';

export const metricName = (i: number) => `Sensors/S${i}`;

export interface EdgeNodeOptions {
  url: string;
  group: string;
  node: string;
  /** Device ids of the node. */
  devices: string[];
  /** Metrics per device. */
  metrics: number;
  /** MQTT_TOPIC_PREFIX of the service. */
  prefix?: string;
  /** Birth again when asked (NCMD Node Control/Rebirth); default true. */
  answerRebirth?: boolean;
}

/** One edge node of the simulator, with its devices: births, data, deaths, rebirths. */
export class EdgeNode {
  client!: MqttClient;
  seq = 0;
  bdSeq = 0;
  /** Rebirth requests received. */
  rebirths = 0;
  readonly root: string;

  constructor(readonly o: EdgeNodeOptions) {
    this.root = `${o.prefix ?? ''}spBv1.0/${o.group}`;
  }

  topic(type: string, device?: string) {
    return `${this.root}/${type}/${this.o.node}${device ? `/${device}` : ''}`;
  }

  /** Connects with its death certificate as will (bdSeq of this session), then births. */
  async connect(): Promise<void> {
    const will = encodePayload({
      timestamp: Date.now(),
      metrics: [{ name: 'bdSeq', datatype: DataType.UInt64, value: this.bdSeq }],
    });
    this.client = await mqtt.connectAsync(this.o.url, {
      protocolVersion: 5,
      clientId: `sim-${this.o.group}-${this.o.node}-${Math.random().toString(36).slice(2, 8)}`,
      clean: true,
      reconnectPeriod: 0,
      will: { topic: this.topic('NDEATH'), payload: Buffer.from(will), qos: 1, retain: false },
    });
    await this.client.subscribeAsync(this.topic('NCMD'), { qos: 0 });
    this.client.on('message', (topic) => {
      if (topic !== this.topic('NCMD')) return;
      this.rebirths++;
      if (this.o.answerRebirth !== false) void this.birth();
    });
    await this.birth();
  }

  private nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq + 1) % 256;
    return s;
  }

  async birth(values?: (device: number, metric: number) => number): Promise<void> {
    this.seq = 0;
    const now = Date.now();
    await this.publish(this.topic('NBIRTH'), {
      timestamp: now,
      seq: this.nextSeq(),
      metrics: [
        { name: 'bdSeq', datatype: DataType.UInt64, value: this.bdSeq, timestamp: now },
        { name: 'Node Control/Rebirth', datatype: DataType.Boolean, value: false, timestamp: now },
      ],
    });
    for (let d = 0; d < this.o.devices.length; d++)
      await this.publish(this.topic('DBIRTH', this.o.devices[d]), {
        timestamp: now,
        seq: this.nextSeq(),
        metrics: Array.from({ length: this.o.metrics }, (_, i) => ({
          name: metricName(i),
          alias: i + 1,
          datatype: DataType.Double,
          timestamp: now,
          value: values ? values(d, i) : 0,
        })),
      });
  }

  /** DDATA of one device: `values[i]` of metric i (by alias, or by name), at `timestamp`. */
  async data(
    device: number,
    values: (number | undefined)[],
    opts: { timestamp?: number; historical?: boolean; byName?: boolean; qos?: 0 | 1 } = {},
  ): Promise<void> {
    const ts = opts.timestamp ?? Date.now();
    const metrics: Metric[] = [];
    values.forEach((value, i) => {
      if (value === undefined) return;
      // One shape for every metric (no spread): a copy made by spread is several times slower.
      metrics.push({
        name: opts.byName ? metricName(i) : undefined,
        alias: opts.byName ? undefined : i + 1,
        datatype: DataType.Double,
        timestamp: ts,
        historical: opts.historical,
        value,
      });
    });
    await this.publish(
      this.topic('DDATA', this.o.devices[device]),
      { timestamp: ts, seq: this.nextSeq(), metrics },
      opts.qos,
    );
  }

  /** NDATA: metrics of the node itself, by name, at `timestamp`. */
  async nodeData(metrics: Metric[], timestamp = Date.now()): Promise<void> {
    await this.publish(this.topic('NDATA'), {
      timestamp,
      seq: this.nextSeq(),
      metrics: metrics.map((m) => ({ timestamp, ...m })),
    });
  }

  /** A message whose seq is lost on the way (the next one shows a gap). */
  skipSeq(): void {
    this.nextSeq();
  }

  async deviceDeath(device: number): Promise<void> {
    await this.publish(this.topic('DDEATH', this.o.devices[device]), {
      timestamp: Date.now(),
      seq: this.nextSeq(),
      metrics: [],
    });
  }

  /** A clean disconnect: NDEATH published by the node itself, then the next session's bdSeq. */
  async death(): Promise<void> {
    await this.publish(this.topic('NDEATH'), {
      timestamp: Date.now(),
      metrics: [{ name: 'bdSeq', datatype: DataType.UInt64, value: this.bdSeq }],
    });
    await this.client.endAsync();
    this.bdSeq = (this.bdSeq + 1) % 256;
  }

  /** Drops the connection without a word: the broker publishes the will (NDEATH). */
  async vanish(): Promise<void> {
    await this.client.endAsync(true);
    // endAsync(true) closes without DISCONNECT? MQTT.js sends none when forced, so the will goes out.
    this.bdSeq = (this.bdSeq + 1) % 256;
  }

  async publish(topic: string, payload: Parameters<typeof encodePayload>[0], qos: 0 | 1 = 0) {
    await this.client.publishAsync(topic, Buffer.from(encodePayload(payload)), { qos });
  }

  async close(): Promise<void> {
    if (this.client?.connected) await this.client.endAsync();
  }
}

/** The provisioning document that binds metric i of device d of node n to `sensors[k]`, in order. */
export function bindingsDocument(
  group: string,
  nodes: { node: string; devices: string[] }[],
  metrics: number,
  sensors: number[],
) {
  const sparkplugMetrics: Record<string, unknown>[] = [];
  let k = 0;
  for (const n of nodes)
    for (const device of n.devices)
      for (let i = 0; i < metrics && k < sensors.length; i++)
        sparkplugMetrics.push({
          GroupID: group,
          EdgeNodeID: n.node,
          DeviceID: device,
          MetricName: metricName(i),
          SiteSensorID: sensors[k++],
          Field: 'value',
        });
  return { sparkplugMetrics };
}
