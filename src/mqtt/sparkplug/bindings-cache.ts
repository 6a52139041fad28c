import type { Database } from '../../db/index.js';
import type { Settings } from '../../settings.js';
import { loadNodeBindings, type NodeBindings } from './bindings.js';
import { nodeKey, type NodeRef } from './node-sessions.js';

// The bindings of each edge node, read again when older than EQUIPMENT_CACHE_MS (at least
// CACHE_MIN_MS) or at the node's birth, so a node's values follow its provisioning soon after
// it changes without a query per message.

const CACHE_MIN_MS = 1000;

export type BindingsCacheSettings = Pick<Settings, 'EQUIPMENT_CACHE_MS' | 'QUERY_TIMEOUT_MS'>;

export class BindingsCache {
  private readonly byNode = new Map<string, { bindings: NodeBindings; at: number }>();

  constructor(
    private readonly db: Database,
    private readonly settings: BindingsCacheSettings,
  ) {}

  /** The node's bindings; `fresh`: read now whatever their age. */
  async of(node: NodeRef, fresh = false): Promise<NodeBindings> {
    const key = nodeKey(node);
    const ttl = Math.max(CACHE_MIN_MS, this.settings.EQUIPMENT_CACHE_MS);
    let cached = this.byNode.get(key);
    if (fresh || !cached || Date.now() - cached.at > ttl) {
      const bindings = await loadNodeBindings(
        this.db.bounded(this.settings.QUERY_TIMEOUT_MS),
        node.group,
        node.node,
      );
      this.byNode.set(key, (cached = { bindings, at: Date.now() }));
    }
    return cached.bindings;
  }
}
