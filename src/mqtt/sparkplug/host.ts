import type { MqttClient } from 'mqtt';
import type { Database } from '../../db/index.js';
import type { Logger } from '../../logger.js';
import type { Settings } from '../../settings.js';
import type { TelemetryService } from '../../telemetry/service.js';
import { endConnection, openConnection } from '../connection.js';
import { BindingsCache } from './bindings-cache.js';
import { DataType, decodePayload, encodePayload, type Payload } from './codec.js';
import { EdgeEvents } from './edge-events.js';
import { createLogOnce } from './log-once.js';
import {
  NodeSessions,
  nodeKey,
  type MessageResult,
  type MessageType,
  type NodeRef,
} from './node-sessions.js';
import { WriteBatches } from './write-batches.js';

// The Sparkplug B 3.0 host application (contract 14): its STATE birth and will, the topics of
// spBv1.0/# read into messages, each checked by its node's session (node-sessions.ts) in order of
// arrival; what they store is then written in order per node (write-batches.ts), edge events
// alike (edge-events.ts). Nothing a gateway sends can stop it: a payload it cannot read, a metric
// it cannot map, a write that fails are counted, logged once per node and metric, and dropped.

const NAMESPACE = 'spBv1.0';
const MESSAGE_TYPES: readonly string[] = ['NBIRTH', 'NDEATH', 'NDATA', 'DBIRTH', 'DDATA', 'DDEATH'];

/** What the host needs of the service. */
export interface SparkplugHostOptions {
  db: Database;
  settings: Pick<
    Settings,
    | 'MQTT_URL'
    | 'MQTT_HOST_ID'
    | 'MQTT_TOPIC_PREFIX'
    | 'MQTT_CA_FILE'
    | 'MQTT_REORDER_MS'
    | 'BODY_LIMIT'
    | 'WRITE_TIMEOUT_MS'
    | 'QUERY_TIMEOUT_MS'
    | 'EQUIPMENT_CACHE_MS'
  >;
  telemetry: Pick<TelemetryService, 'store'>;
  log: Logger;
  /** Each message by what became of it (the metrics). */
  onMessage?: (result: MessageResult) => void;
  /** Edge events were stored (the live stream looks for them). */
  onCommit: () => void;
}

export class SparkplugHost {
  readonly client: MqttClient;
  private readonly sessions: NodeSessions;
  private readonly writes: WriteBatches;
  private readonly once = createLogOnce();
  private readonly stateTopic: string;
  /** MQTT_TOPIC_PREFIX and the Sparkplug namespace. */
  private readonly root: string;
  private readonly stateTs = Date.now();
  private closing = false;

  constructor(private readonly o: SparkplugHostOptions) {
    const { settings } = o;
    this.root = `${settings.MQTT_TOPIC_PREFIX}${NAMESPACE}`;
    this.stateTopic = `${this.root}/STATE/${settings.MQTT_HOST_ID}`;
    const count = (result: MessageResult) => this.count(result);
    const bindings = new BindingsCache(o.db, settings);
    const edges = new EdgeEvents({ db: o.db, settings, bindings, onCommit: o.onCommit });
    const writes = new WriteBatches({
      settings,
      telemetry: o.telemetry,
      log: o.log,
      bindings,
      count,
      once: this.once,
      closing: () => this.closing,
    });
    this.writes = writes;
    this.sessions = new NodeSessions(settings.MQTT_REORDER_MS, {
      count,
      rebirth: (node, why) => this.rebirth(node, why),
      edge: (node, deviceId, online) =>
        writes.enqueue(node, () => edges.record(node, deviceId, online)),
      store: (node, values) => writes.store(node, values),
    });
    this.client = openConnection({
      url: settings.MQTT_URL!,
      clientId: `${settings.MQTT_HOST_ID}-host-${Math.random().toString(36).slice(2, 10)}`,
      clean: true,
      caFile: settings.MQTT_CA_FILE,
      log: o.log,
      name: 'Sparkplug host',
      will: {
        topic: this.stateTopic,
        payload: Buffer.from(this.state(false)),
        qos: 1,
        retain: true,
      },
      onConnect: (client) => {
        client.subscribe(`${this.root}/#`, { qos: 1 }, (err) => {
          if (err) o.log.warn({ err: err.message }, 'mqtt: subscribing to spBv1.0/# failed');
          else
            client.publish(this.stateTopic, this.state(true), { qos: 1, retain: true }, () => {});
        });
      },
      onMessage: (topic, payload) => {
        try {
          this.handle(topic, payload);
        } catch (err) {
          // Never past here: a bug with one message must not end the subscription.
          count('malformed');
          this.once(`bug:${topic}`, () =>
            o.log.error({ err, topic }, 'mqtt: a Sparkplug message failed'),
          );
        }
      },
    });
  }

  /** The STATE payload of Sparkplug 3.0: the birth's timestamp, the same in the will. */
  private state(online: boolean): string {
    return JSON.stringify({ online, timestamp: this.stateTs });
  }

  private count(result: MessageResult) {
    this.o.onMessage?.(result);
  }

  /** One message of spBv1.0/#: read, then checked against its node's session. */
  handle(topic: string, bytes: Buffer): void {
    if (this.closing) return;
    if (!topic.startsWith(`${this.root}/`)) return;
    const parts = [NAMESPACE, ...topic.slice(this.root.length + 1).split('/')];
    if (parts[1] === 'STATE') return;
    const [, group, type, nodeId, deviceId] = parts;
    if (parts.length < 4 || parts.length > 5 || !group || !nodeId) return this.count('ignored');
    if (type === 'NCMD' || type === 'DCMD') return; // commands, ours or another application's
    const isDevice = type === 'DBIRTH' || type === 'DDATA' || type === 'DDEATH';
    if (!MESSAGE_TYPES.includes(type) || isDevice !== (parts.length === 5))
      return this.count('ignored');
    let payload: Payload;
    try {
      if (bytes.length > this.o.settings.BODY_LIMIT)
        throw new Error('payload larger than BODY_LIMIT');
      payload = decodePayload(bytes);
    } catch (err) {
      this.count('malformed');
      this.once(`${nodeKey({ group, node: nodeId })}\u0000(payload)`, () =>
        this.o.log.warn(
          { groupId: group, edgeNodeId: nodeId, type, err: (err as Error).message },
          'mqtt: a Sparkplug payload that cannot be read was dropped (logged once per node)',
        ),
      );
      return;
    }
    this.sessions.receive(group, nodeId, {
      type: type as MessageType,
      deviceId: deviceId ?? null,
      payload,
    });
  }

  /** NCMD Node Control/Rebirth = true (the node's session says when). */
  private rebirth(node: NodeRef, why: string) {
    const now = Date.now();
    this.o.log.info(
      { groupId: node.group, edgeNodeId: node.node, reason: why },
      'mqtt: asking a Sparkplug node to rebirth',
    );
    const payload = encodePayload({
      timestamp: now,
      metrics: [
        { name: 'Node Control/Rebirth', datatype: DataType.Boolean, value: true, timestamp: now },
      ],
    });
    this.client.publish(
      `${this.root}/${node.group}/NCMD/${node.node}`,
      Buffer.from(payload),
      { qos: 0 },
      () => {},
    );
  }

  /** Says it goes offline (its STATE), then lets what is being written finish. */
  async close(): Promise<void> {
    this.closing = true;
    this.sessions.stop();
    if (this.client.connected)
      await new Promise<void>((resolve) =>
        this.client.publish(this.stateTopic, this.state(false), { qos: 1, retain: true }, () =>
          resolve(),
        ),
      );
    await endConnection(this.client);
    await this.writes.idle();
  }
}
