import type { Database } from '../../db/index.js';
import type { Settings } from '../../settings.js';
import { publishEdgeEvents, type EdgeEvent } from '../../stream/publish.js';
import type { BindingsCache } from './bindings-cache.js';
import type { NodeRef } from './node-sessions.js';

// Edge events: a node or one of its devices went online or offline, stored for each site of the
// equipment bound to it (the live stream shows them to those sites).

export interface EdgeEventsOptions {
  db: Database;
  settings: Pick<Settings, 'WRITE_TIMEOUT_MS'>;
  bindings: BindingsCache;
  /** Events were stored (the live stream looks for them). */
  onCommit: () => void;
}

export class EdgeEvents {
  constructor(private readonly o: EdgeEventsOptions) {}

  /** The node (deviceId null) or its device went online or offline. */
  async record(node: NodeRef, deviceId: string | null, online: boolean): Promise<void> {
    // A node's birth may come with a new provisioning: its bindings are read again.
    const bindings = await this.o.bindings.of(node, deviceId === null && online);
    const sites = deviceId === null ? bindings.sites : bindings.sitesOf(deviceId);
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
}
