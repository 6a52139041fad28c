import type { Queryable } from '../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../equipment.js';
import { KINDS } from '../telemetry/kinds.js';
import { ImportError, type References } from './checks.js';
import type { ProvisioningDocument, SparkplugMetricIn } from './document.js';

// The document's `sparkplugMetrics` (contract 14): each binds one Sparkplug metric (of an edge node,
// or of one of its devices) to one field of one piece of equipment, named by exactly one id field of
// its kind; `Field` is a field of that kind's upload record (interface 2.10; a sensor's is `value`).

export interface SparkplugBinding {
  group: string;
  node: string;
  device: string;
  metric: string;
  kind: TelemetryKind;
  id: number;
  field: string;
}

/** Which equipment a binding names: exactly one of the id fields, else an ImportError at `path`. */
export function boundEquipment(
  b: SparkplugMetricIn,
  path: string,
): { kind: TelemetryKind; id: number; idField: string } {
  const named = TELEMETRY_KINDS.filter(
    (k) => (b as Record<string, unknown>)[EQUIPMENT[k].listIdField] !== undefined,
  );
  if (named.length !== 1)
    throw new ImportError(
      path,
      `must name exactly one of ${TELEMETRY_KINDS.map((k) => EQUIPMENT[k].listIdField).join(', ')}`,
    );
  const kind = named[0];
  const idField = EQUIPMENT[kind].listIdField;
  return { kind, id: (b as Record<string, unknown>)[idField] as number, idField };
}

/** Checks every binding (shape, equipment, field, one binding per metric); returns them as rows. */
export function checkSparkplugMetrics(
  doc: ProvisioningDocument,
  refs: References,
): SparkplugBinding[] {
  const seen = new Map<string, number>();
  return (doc.sparkplugMetrics ?? []).map((b, i) => {
    const path = `sparkplugMetrics[${i}]`;
    const { kind, id, idField } = boundEquipment(b, path);
    refs.siteOf(kind, id, `${path}.${idField}`);
    const fields = KINDS[kind].fields.map((f) => f.name);
    const field = b.Field ?? (kind === 'sensor' ? 'value' : undefined);
    if (field === undefined)
      throw new ImportError(
        `${path}.Field`,
        `is required for a ${EQUIPMENT[kind].label}: one of ${fields.join(', ')}`,
      );
    if (!fields.includes(field))
      throw new ImportError(
        `${path}.Field`,
        `${field} is not a field of a ${EQUIPMENT[kind].label} (${fields.join(', ')})`,
      );
    const device = b.DeviceID ?? '';
    const key = JSON.stringify([b.GroupID, b.EdgeNodeID, device, b.MetricName]);
    const other = seen.get(key);
    if (other !== undefined)
      throw new ImportError(
        `${path}.MetricName`,
        `metric ${b.MetricName} is already bound by sparkplugMetrics[${other}]`,
      );
    seen.set(key, i);
    return { group: b.GroupID, node: b.EdgeNodeID, device, metric: b.MetricName, kind, id, field };
  });
}

/** The equipment the bindings name, for References.load: kind -> ids. */
export function sparkplugEquipment(doc: ProvisioningDocument): Map<TelemetryKind, number[]> {
  const out = new Map<TelemetryKind, number[]>();
  doc.sparkplugMetrics?.forEach((b) => {
    for (const k of TELEMETRY_KINDS) {
      const v = (b as Record<string, unknown>)[EQUIPMENT[k].listIdField];
      if (typeof v === 'number') out.set(k, [...(out.get(k) ?? []), v]);
    }
  });
  return out;
}

/** Upserts the bindings; returns how many were new or changed. */
export async function upsertSparkplugMetrics(
  tx: Queryable,
  rows: SparkplugBinding[],
  stamp: Date,
): Promise<number> {
  if (!rows.length) return 0;
  const col = <K extends keyof SparkplugBinding>(k: K) => rows.map((r) => r[k]);
  const changed = await tx.query<{ n: number }>(
    `WITH up AS (
       INSERT INTO sparkplug_metrics AS s (group_id, edge_node_id, device_id, metric_name, kind, equipment_id, field, updated_at)
       SELECT g, n, d, m, k, e, f, $8 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[])
         AS u(g, n, d, m, k, e, f)
       ON CONFLICT (group_id, edge_node_id, device_id, metric_name) DO UPDATE
         SET kind = EXCLUDED.kind, equipment_id = EXCLUDED.equipment_id, field = EXCLUDED.field, updated_at = EXCLUDED.updated_at
         WHERE (s.kind, s.equipment_id, s.field) IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.equipment_id, EXCLUDED.field)
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [
      col('group'),
      col('node'),
      col('device'),
      col('metric'),
      col('kind'),
      col('id'),
      col('field'),
      stamp.toISOString(),
    ],
  );
  return changed[0].n;
}
