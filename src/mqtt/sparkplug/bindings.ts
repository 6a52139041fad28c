import type { Queryable } from '../../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../../equipment.js';
import { KINDS } from '../../telemetry/kinds.js';

// The bindings of one edge node (the provisioning document's `sparkplugMetrics`): which metric of
// the node or of one of its devices is which field of which equipment, with the equipment's site
// as it is now. Equipment that no longer exists has no site: its bindings are left out.

export interface Binding {
  /** '' for a metric of the node itself. */
  deviceId: string;
  metricName: string;
  kind: TelemetryKind;
  equipmentId: number;
  field: string;
  siteId: number;
  /** The field's place in KINDS[kind].fields; -1 when the kind has no such field. */
  fieldIndex: number;
}

export interface NodeBindings {
  /** The binding of a metric of a device ('' the node's own), by device and metric name. */
  byMetric: Map<string, Map<string, Binding>>;
  /** Sites of the bindings of the node (any device), and per device ('' the node's own). */
  sites: number[];
  sitesOf(deviceId: string): number[];
}

const joins = TELEMETRY_KINDS.map(
  (k, i) =>
    `LEFT JOIN ${EQUIPMENT[k].table} e${i} ON b.kind = '${k}' AND e${i}.${EQUIPMENT[k].idColumn} = b.equipment_id`,
).join('\n');
const site = `coalesce(${TELEMETRY_KINDS.map((_, i) => `e${i}.site_id`).join(', ')})`;

export async function loadNodeBindings(
  db: Queryable,
  groupId: string,
  edgeNodeId: string,
): Promise<NodeBindings> {
  const rows = await db.query<Omit<Binding, 'fieldIndex'>>(
    `SELECT b.device_id AS "deviceId", b.metric_name AS "metricName", b.kind, b.equipment_id AS "equipmentId",
            b.field, ${site} AS "siteId"
       FROM sparkplug_metrics b
       ${joins}
      WHERE b.group_id = $1 AND b.edge_node_id = $2 AND ${site} IS NOT NULL`,
    [groupId, edgeNodeId],
  );
  const byMetric = new Map<string, Map<string, Binding>>();
  const byDevice = new Map<string, Set<number>>();
  for (const r of rows) {
    const fieldIndex = KINDS[r.kind].fields.findIndex((f) => f.name === r.field);
    let names = byMetric.get(r.deviceId);
    if (!names) byMetric.set(r.deviceId, (names = new Map()));
    names.set(r.metricName, { ...r, fieldIndex });
    byDevice.set(r.deviceId, (byDevice.get(r.deviceId) ?? new Set()).add(r.siteId));
  }
  return {
    byMetric,
    sites: [...new Set(rows.map((r) => r.siteId))].sort((a, b) => a - b),
    sitesOf: (deviceId) => [...(byDevice.get(deviceId) ?? [])].sort((a, b) => a - b),
  };
}
