import type { Metric, Payload } from './codec.js';

// Per edge node, the Sparkplug B state machine of births, seq and deaths (contract 14). Messages
// are checked in order of arrival: seq (a gap held for MQTT_REORDER_MS, for the missing ones to
// arrive), aliases, births. What passes is handed on (values to store, nodes and devices going
// online or offline); what does not is counted and the node asked to rebirth.

/** Metrics of a node's own that are not data. */
const CONTROL = /^(bdSeq$|Node Control\/|Properties\/)/;
/** How often a node may be asked to rebirth while it does not. */
const REBIRTH_GAP_MS = 1000;

/** What became of a message (the metrics count by it). */
export type MessageResult = 'stored' | 'ignored' | 'malformed' | 'rejected';

export type MessageType = 'NBIRTH' | 'NDEATH' | 'DBIRTH' | 'DDEATH' | 'NDATA' | 'DDATA';

export interface Message {
  type: MessageType;
  deviceId: string | null;
  payload: Payload;
}

/** An edge node: its group and its id. */
export interface NodeRef {
  readonly group: string;
  readonly node: string;
}

/** The key of a node in maps and in log-once keys. */
export const nodeKey = (n: NodeRef) => `${n.group}/${n.node}`;

/** The values of one message, names resolved, waiting to be written. */
export interface MessageValues {
  /** '' for the node's own. */
  deviceId: string;
  named: { name: string; metric: Metric }[];
  payloadTs: number | undefined;
}

/** Where the sessions hand on what they accept, and what they refuse. */
export interface SessionSink {
  count(result: MessageResult): void;
  /** Ask the node for a rebirth (at most once a REBIRTH_GAP_MS until it births). */
  rebirth(node: NodeRef, why: string): void;
  /** The node (deviceId null) or one of its devices went online or offline. */
  edge(node: NodeRef, deviceId: string | null, online: boolean): void;
  /** The values of a birth or data message, to be written in order. */
  store(node: NodeRef, values: MessageValues): void;
}

interface DeviceState {
  aliases: Map<number, string>;
  born: boolean;
}

interface NodeSession extends NodeRef {
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
}

export class NodeSessions {
  private readonly nodes = new Map<string, NodeSession>();

  constructor(
    private readonly reorderMs: number,
    private readonly sink: SessionSink,
  ) {}

  /** One message of a node, in order of arrival. */
  receive(group: string, nodeId: string, msg: Message): void {
    const node = this.nodeOf(group, nodeId);
    if (msg.type === 'NBIRTH') return this.nodeBirth(node, msg);
    if (msg.type === 'NDEATH') return this.nodeDeath(node, msg);
    if (!node.born) return this.drop(node, 'data from a node whose birth was not seen');
    const seq = msg.payload.seq;
    if (seq === undefined || !Number.isInteger(seq) || seq < 0 || seq > 255) {
      this.sink.count('malformed');
      return this.drop(node, 'a message without a valid seq');
    }
    if (seq !== (node.seq + 1) % 256) {
      // Ahead of a gap: held for MQTT_REORDER_MS, for the missing ones to arrive.
      if (node.pending.size >= 255 || this.reorderMs === 0) return this.gap(node);
      node.pending.set(seq, msg);
      node.gapTimer ??= setTimeout(() => this.gap(node), this.reorderMs).unref();
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
    if (!node.pending.size) clearGap(node);
  }

  /** No gap waits any longer (the host is closing). */
  stop(): void {
    for (const node of this.nodes.values()) clearGap(node);
  }

  private nodeOf(group: string, nodeId: string): NodeSession {
    const key = nodeKey({ group, node: nodeId });
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
        }),
      );
    return node;
  }

  /** A gap not filled in time: what waits behind it is dropped, and the node asked to rebirth. */
  private gap(node: NodeSession) {
    const dropped = node.pending.size + 1;
    node.pending.clear();
    clearGap(node);
    for (let i = 0; i < dropped; i++) this.sink.count('rejected');
    node.born = false;
    this.rebirth(node, 'a gap in seq');
  }

  private drop(node: NodeSession, why: string) {
    this.sink.count('rejected');
    this.rebirth(node, why);
  }

  private rebirth(node: NodeSession, why: string) {
    const now = Date.now();
    if (now - node.lastRebirth < REBIRTH_GAP_MS) return;
    node.lastRebirth = now;
    this.sink.rebirth(node, why);
  }

  private nodeBirth(node: NodeSession, msg: Message) {
    const { payload } = msg;
    clearGap(node);
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
    this.sink.edge(node, null, true);
    this.store(node, null, payload, node.aliases);
  }

  private nodeDeath(node: NodeSession, msg: Message) {
    const bdSeq = msg.payload.metrics.find((m) => m.name === 'bdSeq')?.value;
    // A will of an older session (its bdSeq not this birth's) says nothing of the node now.
    if (!node.online || (node.bdSeq !== undefined && bdSeq !== node.bdSeq))
      return this.sink.count('ignored');
    node.born = false;
    node.online = false;
    node.pending.clear();
    clearGap(node);
    this.sink.count('stored');
    this.sink.edge(node, null, false);
  }

  /** A message in seq order, from a born node. */
  private accept(node: NodeSession, msg: Message) {
    node.seq = msg.payload.seq!;
    const deviceId = msg.deviceId;
    switch (msg.type) {
      case 'NDATA':
        return this.store(node, null, msg.payload, node.aliases);
      case 'DBIRTH': {
        const device = { aliases: learnAliases(msg.payload.metrics), born: true };
        node.devices.set(deviceId!, device);
        this.sink.edge(node, deviceId, true);
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
        this.sink.count('stored');
        this.sink.edge(node, deviceId, false);
      }
    }
  }

  /** The values of a birth or data message, named from aliases (a metric without one drops it). */
  private store(
    node: NodeSession,
    deviceId: string | null,
    payload: Payload,
    aliases: Map<number, string>,
  ) {
    const named: MessageValues['named'] = [];
    for (const metric of payload.metrics) {
      const name =
        metric.name ?? (metric.alias !== undefined ? aliases.get(metric.alias) : undefined);
      if (name === undefined) return this.drop(node, 'a metric alias not in its birth');
      if (deviceId === null && CONTROL.test(name)) continue;
      named.push({ name, metric });
    }
    this.sink.store(node, { deviceId: deviceId ?? '', named, payloadTs: payload.timestamp });
  }
}

function clearGap(node: NodeSession) {
  clearTimeout(node.gapTimer);
  node.gapTimer = undefined;
}

function learnAliases(metrics: Metric[]): Map<number, string> {
  const aliases = new Map<number, string>();
  for (const m of metrics)
    if (m.alias !== undefined && m.name !== undefined) aliases.set(m.alias, m.name);
  return aliases;
}
