import { Access } from '../../auth/access.js';
import { HttpError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Settings } from '../../settings.js';
import { idPath } from '../../telemetry/equipment.js';
import type { Entry } from '../../telemetry/kinds.js';
import type { TelemetryService } from '../../telemetry/service.js';
import type { BindingsCache } from './bindings-cache.js';
import type { LogOnce } from './log-once.js';
import { nodeKey, type MessageResult, type MessageValues, type NodeRef } from './node-sessions.js';
import { toEntries } from './records.js';

// The writes of each edge node, one after another in the order its messages came, through the
// one upload path. Messages that arrive while a write runs are batched into the next one; a write
// the database cannot take yet is tried again (later messages wait behind it); a write refused,
// or a node sending faster than its values can be stored, is counted and logged once.

/** Messages of one node waiting to be written; past this they are dropped (and counted). */
const MAX_QUEUED = 10_000;
/** Messages of one node written together, at most. */
const MAX_BATCHED = 500;

export interface WriteBatchesOptions {
  settings: Pick<Settings, 'WRITE_TIMEOUT_MS'>;
  telemetry: Pick<TelemetryService, 'store'>;
  log: Logger;
  bindings: BindingsCache;
  count: (result: MessageResult) => void;
  once: LogOnce;
  /** The host is closing: a failed write is not tried again. */
  closing: () => boolean;
}

interface NodeQueue {
  chain: Promise<void>;
  queued: number;
  /** The values of the write queued last, while it has not started: later messages join it. */
  open: MessageValues[] | undefined;
}

export class WriteBatches {
  private readonly queues = new Map<string, NodeQueue>();

  constructor(private readonly o: WriteBatchesOptions) {}

  /** Queues the values of a message, joining the node's write that has not started yet if any. */
  store(node: NodeRef, values: MessageValues): void {
    const queue = this.queueOf(node);
    if (queue.queued >= MAX_QUEUED) {
      this.o.count('rejected');
      this.o.once(`${nodeKey(node)}\u0000(queue)`, () =>
        this.o.log.warn(
          { groupId: node.group, edgeNodeId: node.node },
          'mqtt: a Sparkplug node sends faster than its data is stored; messages dropped',
        ),
      );
      return;
    }
    // Joins the node's write that has not started yet, if the last thing queued is one.
    if (queue.open && queue.open.length < MAX_BATCHED) return void queue.open.push(values);
    const batch: MessageValues[] = [values];
    this.enqueue(node, () => {
      if (queue.open === batch) queue.open = undefined;
      return this.write(node, batch);
    });
    queue.open = batch;
  }

  /** Runs a node's work one task after another; a failure is logged, never thrown. */
  enqueue(node: NodeRef, task: () => Promise<void>): void {
    const queue = this.queueOf(node);
    // Whatever comes after this task is written after it.
    queue.open = undefined;
    queue.queued++;
    queue.chain = queue.chain
      .then(task)
      .catch((err) =>
        this.o.once(`${nodeKey(node)}\u0000(task)`, () =>
          this.o.log.warn(
            { groupId: node.group, edgeNodeId: node.node, err },
            'mqtt: Sparkplug work failed',
          ),
        ),
      )
      .finally(() => queue.queued--);
  }

  /** Ends when every task queued so far has. */
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.chain));
  }

  private queueOf(node: NodeRef): NodeQueue {
    const key = nodeKey(node);
    let queue = this.queues.get(key);
    if (!queue)
      this.queues.set(key, (queue = { chain: Promise.resolve(), queued: 0, open: undefined }));
    return queue;
  }

  /**
   * Writes the values of one or more messages of a node (those that arrived while its previous
   * write ran: one upload each for logs and readings, in the order they came).
   */
  private async write(node: NodeRef, batch: MessageValues[]) {
    const bindings = await this.o.bindings.of(node);
    const logs: Entry[] = [];
    const readings: Entry[] = [];
    const outcome: Exclude<MessageResult, 'rejected'>[] = [];
    for (const { deviceId, named, payloadTs } of batch) {
      const converted = toEntries(bindings, deviceId, named, payloadTs);
      for (const [names, what] of [
        [converted.unbound, 'has no binding; ignored'],
        [converted.invalid, 'has a value that does not fit its binding; dropped'],
      ] as const)
        for (const name of names)
          this.o.once(`${nodeKey(node)}/${deviceId}\u0000${name}`, () =>
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
      outcome.forEach((r) => this.o.count(r === 'stored' && !stored ? 'rejected' : r));
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
        this.o.once(`${nodeKey(node)}\u0000(write)`, () =>
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
        if (refused || this.o.closing()) return ok(false);
        await new Promise((r) => setTimeout(r, Math.min(5000, 200 * 2 ** attempt)).unref());
        if (this.o.closing()) return ok(false);
      }
    }
  }
}

/** Sparkplug data is written on behalf of the sites of the node's bound equipment. */
const siteAccess = (sites: number[]) =>
  new Access({
    clientId: 'mqtt:sparkplug',
    siteIds: sites,
    cameraIds: [],
    admin: false,
    role: 'edge',
    disabled: false,
  });
