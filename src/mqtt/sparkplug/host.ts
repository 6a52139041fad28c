import type { MqttClient } from 'mqtt';
import { Access } from '../../auth/access.js';
import { HttpError } from '../../errors.js';
import { publishEdgeEvents, type EdgeEvent } from '../../stream/publish.js';
import { idPath } from '../../telemetry/equipment.js';
import { endConnection, openConnection } from '../connection.js';
import type { MqttServiceOptions } from '../service.js';
import { loadNodeBindings, type NodeBindings } from './bindings.js';
import type { Entry } from '../../telemetry/kinds.js';
import { DataType, decodePayload, encodePayload, type Metric, type Payload } from './codec.js';
import { toEntries } from './records.js';

// The Sparkplug B 3.0 host application (contract 14): its STATE birth and will, and per edge node
// the state machine of births, seq and deaths. A message is checked in order of arrival (seq,
// aliases, births); what it stores is then written in order per node, through the one upload path.
// Nothing a gateway sends can stop it: a payload it cannot read, a metric it cannot map, a write
// that fails are counted, logged once per node and metric, and dropped.

const NAMESPACE = 'spBv1.0';
/** Metrics of a node's own that are not data. */
const CONTROL = /^(bdSeq$|Node Control\/|Properties\/)/;
/** Messages of one node waiting to be written; past this they are dropped (and counted). */
const MAX_QUEUED = 10_000;
/** Messages of one node written together, at most. */
const MAX_BATCHED = 500;
/** Log-once keys kept; past this the memory starts again (a node sending ever new names). */
const MAX_LOGGED = 10_000;
/** How often a node may be asked to rebirth while it does not. */
const REBIRTH_GAP_MS = 1000;
const CACHE_MIN_MS = 1000;

type MessageType = 'NBIRTH' | 'NDEATH' | 'DBIRTH' | 'DDEATH' | 'NDATA' | 'DDATA' | 'NCMD' | 'DCMD';

interface Message {
  type: MessageType;
  deviceId: string | null;
  payload: Payload;
}

interface DeviceState {
  aliases: Map<number, string>;
  born: boolean;
}

interface NodeState {
  group: string;
  node: string;
  /** Its data is taken (a birth seen, no gap since). */
  born: boolean;
  /** Online since its birth, until its death (a gap does not change it). */
  online: boolean;
  bdSeq: number | undefined;
  /** The last seq accepted. */
  seq: number;
  aliases: Map<number, string>;
  devices: Map<string, DeviceState>;
  /** Messages that arrived ahead of a gap, by seq. */
  pending: Map<number, Message>;
  gapTimer: NodeJS.Timeout | undefined;
  lastRebirth: number;
  bindings: NodeBindings | undefined;
  bindingsAt: number;
  chain: Promise<void>;
  queued: number;
  /** The values of the write queued last, while it has not started: later messages join it. */
  open: Pending[] | undefined;
}

/** The values of one message, waiting to be written. */
interface Pending {
  deviceId: string;
  named: { name: string; metric: Metric }[];
  payloadTs: number | undefined;
}

export class SparkplugHost {
  readonly client: MqttClient;
  private readonly nodes = new Map<string, NodeState>();
  private readonly logged = new Set<string>();
  private readonly stateTopic: string;
  /** MQTT_TOPIC_PREFIX and the Sparkplug namespace. */
  private readonly root: string;
  private readonly stateTs = Date.now();
  private closing = false;

  constructor(private readonly o: MqttServiceOptions) {
    const { settings } = o;
    this.root = `${settings.MQTT_TOPIC_PREFIX}${NAMESPACE}`;
    this.stateTopic = `${this.root}/STATE/${settings.MQTT_HOST_ID}`;
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
          this.count('malformed');
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

  private count(result: 'stored' | 'ignored' | 'malformed' | 'rejected') {
    this.o.onMessage?.(result);
  }

  private once(key: string, log: () => void) {
    if (this.logged.has(key)) return;
    if (this.logged.size >= MAX_LOGGED) this.logged.clear();
    this.logged.add(key);
    log();
  }

  /** One message of spBv1.0/#, checked against its node's state in order of arrival. */
  handle(topic: string, bytes: Buffer): void {
    if (this.closing) return;
    if (!topic.startsWith(`${this.root}/`)) return;
    const parts = [NAMESPACE, ...topic.slice(this.root.length + 1).split('/')];
    if (parts[1] === 'STATE') return;
    const [, group, type, nodeId, deviceId] = parts;
    if (parts.length < 4 || parts.length > 5 || !group || !nodeId) return this.count('ignored');
    if (type === 'NCMD' || type === 'DCMD') return; // commands, ours or another application's
    const isDevice = type === 'DBIRTH' || type === 'DDATA' || type === 'DDEATH';
    if (
      !['NBIRTH', 'NDEATH', 'NDATA', 'DBIRTH', 'DDATA', 'DDEATH'].includes(type) ||
      isDevice !== (parts.length === 5)
    )
      return this.count('ignored');
    const node = this.nodeOf(group, nodeId);
    let payload: Payload;
    try {
      if (bytes.length > this.o.settings.BODY_LIMIT)
        throw new Error('payload larger than BODY_LIMIT');
      payload = decodePayload(bytes);
    } catch (err) {
      this.count('malformed');
      this.once(`${group}/${nodeId}\u0000(payload)`, () =>
        this.o.log.warn(
          { groupId: group, edgeNodeId: nodeId, type, err: (err as Error).message },
          'mqtt: a Sparkplug payload that cannot be read was dropped (logged once per node)',
        ),
      );
      return;
    }
    const msg: Message = { type: type as MessageType, deviceId: deviceId ?? null, payload };
    if (msg.type === 'NBIRTH') return this.nodeBirth(node, msg);
    if (msg.type === 'NDEATH') return this.nodeDeath(node, msg);
    if (!node.born) return this.drop(node, 'data from a node whose birth was not seen');
    const seq = payload.seq;
    if (seq === undefined || !Number.isInteger(seq) || seq < 0 || seq > 255) {
      this.count('malformed');
      return this.drop(node, 'a message without a valid seq');
    }
    if (seq !== (node.seq + 1) % 256) {
      // Ahead of a gap: held for MQTT_REORDER_MS, for the missing ones to arrive.
      if (node.pending.size >= 255 || this.o.settings.MQTT_REORDER_MS === 0) return this.gap(node);
      node.pending.set(seq, msg);
      node.gapTimer ??= setTimeout(() => this.gap(node), this.o.settings.MQTT_REORDER_MS).unref();
      return;
    }
    this.accept(node, msg);
    for (
      let next = (node.seq + 1) % 256;
      node.born && node.pending.has(next);
      next = (next + 1) % 256
    ) {
      const held = node.pending.get(next)!;
      node.pending.delete(next);
      this.accept(node, held);
    }
    if (!node.pending.size) this.clearGap(node);
  }

  private nodeOf(group: string, nodeId: string): NodeState {
    const key = `${group}/${nodeId}`;
    let node = this.nodes.get(key);
    if (!node)
      this.nodes.set(
        key,
        (node = {
          group,
          node: nodeId,
          born: false,
          online: false,
          bdSeq: undefined,
          seq: 0,
          aliases: new Map(),
          devices: new Map(),
          pending: new Map(),
          gapTimer: undefined,
          lastRebirth: 0,
          bindings: undefined,
          bindingsAt: 0,
          chain: Promise.resolve(),
          queued: 0,
          open: undefined,
        }),
      );
    return node;
  }

  private clearGap(node: NodeState) {
    clearTimeout(node.gapTimer);
    node.gapTimer = undefined;
  }

  /** A gap not filled in time: what waits behind it is dropped, and the node asked to rebirth. */
  private gap(node: NodeState) {
    const dropped = node.pending.size + 1;
    node.pending.clear();
    this.clearGap(node);
    for (let i = 0; i < dropped; i++) this.count('rejected');
    node.born = false;
    this.rebirth(node, 'a gap in seq');
  }

  private drop(node: NodeState, why: string) {
    this.count('rejected');
    this.rebirth(node, why);
  }

  /** NCMD Node Control/Rebirth = true, at most once a second per node until it births. */
  private rebirth(node: NodeState, why: string) {
    const now = Date.now();
    if (now - node.lastRebirth < REBIRTH_GAP_MS) return;
    node.lastRebirth = now;
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

  private nodeBirth(node: NodeState, msg: Message) {
    const { payload } = msg;
    this.clearGap(node);
    node.pending.clear();
    node.born = true;
    node.online = true;
    // Born again: the next trouble may ask at once.
    node.lastRebirth = 0;
    node.seq =
      payload.seq !== undefined && payload.seq >= 0 && payload.seq <= 255 ? payload.seq : 0;
    const bdSeq = payload.metrics.find((m) => m.name === 'bdSeq')?.value;
    node.bdSeq = typeof bdSeq === 'number' ? bdSeq : undefined;
    node.aliases = learnAliases(payload.metrics);
    node.devices.clear();
    this.enqueue(node, async () => {
      const b = await this.bindingsOf(node, true);
      await this.edge(b.sites, node, null, true);
    });
    this.store(node, null, payload, node.aliases);
  }

  private nodeDeath(node: NodeState, msg: Message) {
    const bdSeq = msg.payload.metrics.find((m) => m.name === 'bdSeq')?.value;
    // A will of an older session (its bdSeq not this birth's) says nothing of the node now.
    if (!node.online || (node.bdSeq !== undefined && bdSeq !== node.bdSeq))
      return this.count('ignored');
    node.born = false;
    node.online = false;
    node.pending.clear();
    this.clearGap(node);
    this.count('stored');
    this.enqueue(node, async () => {
      const b = await this.bindingsOf(node);
      await this.edge(b.sites, node, null, false);
    });
  }

  /** A message in seq order, from a born node. */
  private accept(node: NodeState, msg: Message) {
    node.seq = msg.payload.seq!;
    const deviceId = msg.deviceId;
    switch (msg.type) {
      case 'NDATA':
        return this.store(node, null, msg.payload, node.aliases);
      case 'DBIRTH': {
        const device = { aliases: learnAliases(msg.payload.metrics), born: true };
        node.devices.set(deviceId!, device);
        this.enqueue(node, async () => {
          const b = await this.bindingsOf(node);
          await this.edge(b.sitesOf(deviceId!), node, deviceId, true);
        });
        return this.store(node, deviceId, msg.payload, device.aliases);
      }
      case 'DDATA': {
        const device = node.devices.get(deviceId!);
        if (!device?.born) return this.drop(node, 'data from a device whose birth was not seen');
        return this.store(node, deviceId, msg.payload, device.aliases);
      }
      case 'DDEATH': {
        const device = node.devices.get(deviceId!);
        if (device) device.born = false;
        this.count('stored');
        this.enqueue(node, async () => {
          const b = await this.bindingsOf(node);
          await this.edge(b.sitesOf(deviceId!), node, deviceId, false);
        });
      }
    }
  }

  /** The values of a birth or data message: names from aliases, then written in order. */
  private store(
    node: NodeState,
    deviceId: string | null,
    payload: Payload,
    aliases: Map<number, string>,
  ) {
    const named: { name: string; metric: Metric }[] = [];
    for (const metric of payload.metrics) {
      const name =
        metric.name ?? (metric.alias !== undefined ? aliases.get(metric.alias) : undefined);
      if (name === undefined) return this.drop(node, 'a metric alias not in its birth');
      if (deviceId === null && CONTROL.test(name)) continue;
      named.push({ name, metric });
    }
    if (node.queued >= MAX_QUEUED) {
      this.count('rejected');
      this.once(`${node.group}/${node.node}\u0000(queue)`, () =>
        this.o.log.warn(
          { groupId: node.group, edgeNodeId: node.node },
          'mqtt: a Sparkplug node sends faster than its data is stored; messages dropped',
        ),
      );
      return;
    }
    const item = { deviceId: deviceId ?? '', named, payloadTs: payload.timestamp };
    // Joins the node's write that has not started yet, if the last thing queued is one.
    if (node.open && node.open.length < MAX_BATCHED) return void node.open.push(item);
    const batch: Pending[] = [item];
    this.enqueue(node, () => {
      if (node.open === batch) node.open = undefined;
      return this.write(node, batch);
    });
    node.open = batch;
  }

  /**
   * Writes the values of one or more messages of a node (those that arrived while its previous
   * write ran: one upload each for logs and readings, in the order they came).
   */
  private async write(node: NodeState, batch: Pending[]) {
    const bindings = await this.bindingsOf(node);
    const logs: Entry[] = [];
    const readings: Entry[] = [];
    const outcome: ('stored' | 'ignored' | 'malformed')[] = [];
    for (const { deviceId, named, payloadTs } of batch) {
      const converted = toEntries(bindings, deviceId, named, payloadTs);
      for (const [names, what] of [
        [converted.unbound, 'has no binding; ignored'],
        [converted.invalid, 'has a value that does not fit its binding; dropped'],
      ] as const)
        for (const name of names)
          this.once(`${node.group}/${node.node}/${deviceId}\u0000${name}`, () =>
            this.o.log.info(
              {
                groupId: node.group,
                edgeNodeId: node.node,
                deviceId: deviceId || null,
                metric: name,
              },
              `mqtt: a Sparkplug metric ${what} (logged once)`,
            ),
          );
      outcome.push(
        converted.logs.length ? 'stored' : converted.invalid.length ? 'malformed' : 'ignored',
      );
      // Renumbered in place: a copy made with spread is several times slower to read downstream.
      for (const e of converted.logs) {
        e.index = logs.length;
        logs.push(e);
      }
      for (const e of converted.readings) {
        e.index = readings.length;
        readings.push(e);
      }
    }
    const ok = (stored: boolean) =>
      outcome.forEach((r) => this.count(r === 'stored' && !stored ? 'rejected' : r));
    if (!logs.length) return ok(true);
    const access = siteAccess(bindings.sites);
    const pathOf = idPath('', false);
    // While the database cannot store them (down, or slower than the data comes), the node's values
    // wait and are tried again; its later messages queue behind them (up to MAX_QUEUED writes).
    for (let attempt = 0; ; attempt++) {
      const deadline = Date.now() + this.o.settings.WRITE_TIMEOUT_MS;
      try {
        // Submitted together, the writer may commit both in one transaction.
        await Promise.all([
          this.o.telemetry.store(access, 'log', logs, pathOf, deadline, 'mqtt'),
          readings.length
            ? this.o.telemetry.store(access, 'reading', readings, pathOf, deadline, 'mqtt')
            : undefined,
        ]);
        return ok(true);
      } catch (err) {
        const refused = err instanceof HttpError && err.statusCode < 500;
        this.once(`${node.group}/${node.node}\u0000(write)`, () =>
          this.o.log.warn(
            {
              groupId: node.group,
              edgeNodeId: node.node,
              err: err instanceof HttpError ? err.message : err,
            },
            refused
              ? 'mqtt: Sparkplug data was refused (logged once per node)'
              : 'mqtt: Sparkplug data could not be stored yet; trying again (logged once per node)',
          ),
        );
        if (refused || this.closing) return ok(false);
        await new Promise((r) => setTimeout(r, Math.min(5000, 200 * 2 ** attempt)).unref());
        if (this.closing) return ok(false);
      }
    }
  }

  private async bindingsOf(node: NodeState, fresh = false): Promise<NodeBindings> {
    const ttl = Math.max(CACHE_MIN_MS, this.o.settings.EQUIPMENT_CACHE_MS);
    if (fresh || !node.bindings || Date.now() - node.bindingsAt > ttl) {
      node.bindings = await loadNodeBindings(
        this.o.db.bounded(this.o.settings.QUERY_TIMEOUT_MS),
        node.group,
        node.node,
      );
      node.bindingsAt = Date.now();
    }
    return node.bindings;
  }

  private async edge(sites: number[], node: NodeState, deviceId: string | null, online: boolean) {
    const events: EdgeEvent[] = sites.map((siteId) => ({
      siteId,
      groupId: node.group,
      edgeNodeId: node.node,
      deviceId,
      online,
    }));
    await publishEdgeEvents(this.o.db.bounded(this.o.settings.WRITE_TIMEOUT_MS), events);
    if (events.length) this.o.onCommit();
  }

  /** Runs a node's writes one after another; a failure is logged, never thrown. */
  private enqueue(node: NodeState, task: () => Promise<void>) {
    // Whatever comes after this task is written after it.
    node.open = undefined;
    node.queued++;
    node.chain = node.chain
      .then(task)
      .catch((err) =>
        this.once(`${node.group}/${node.node}\u0000(task)`, () =>
          this.o.log.warn(
            { groupId: node.group, edgeNodeId: node.node, err },
            'mqtt: Sparkplug work failed',
          ),
        ),
      )
      .finally(() => node.queued--);
  }

  /** Says it goes offline (its STATE), then lets what is being written finish. */
  async close(): Promise<void> {
    this.closing = true;
    for (const node of this.nodes.values()) this.clearGap(node);
    if (this.client.connected)
      await new Promise<void>((resolve) =>
        this.client.publish(this.stateTopic, this.state(false), { qos: 1, retain: true }, () =>
          resolve(),
        ),
      );
    await endConnection(this.client);
    await Promise.all([...this.nodes.values()].map((n) => n.chain));
  }
}

function learnAliases(metrics: Metric[]): Map<number, string> {
  const aliases = new Map<number, string>();
  for (const m of metrics)
    if (m.alias !== undefined && m.name !== undefined) aliases.set(m.alias, m.name);
  return aliases;
}

/** Sparkplug data is written on behalf of the sites of the node's bound equipment. */
const siteAccess = (sites: number[]) =>
  new Access({
    clientId: 'mqtt:sparkplug',
    siteIds: sites,
    cameraIds: [],
    admin: false,
    disabled: false,
  });
