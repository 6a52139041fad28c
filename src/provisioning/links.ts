import type { Queryable } from '../db/index.js';
import {
  SENSOR_SCALING,
  SENSOR_TRIGGER,
  TANK_GROUP_CONNECTION,
  type Field,
} from '../schemas/records.js';
import type { ActuatorChildIn, ActuatorIn, EquipmentIn } from './document.js';
import { cols, columnsOf, toRows, upsertRows, type ColumnKind } from './upsert.js';

// Links between equipment and registers. A record that lists its links replaces them; one that
// leaves the list out keeps what it had. What changed is traced by link-changes.ts, not here.

const sameList = (a: string[], b: string[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

export async function replaceSensorLinks(
  db: Queryable,
  sensors: { SiteSensorID: number; SiteID: number; RegisterIDs?: unknown[] }[],
) {
  const listed = sensors.filter((s) => s.RegisterIDs);
  if (!listed.length) return;
  const wanted = new Map(listed.map((s) => [s.SiteSensorID, s.RegisterIDs!.map(String)]));
  const newRegisters = [...wanted.values()].flat();
  const old = await db.query<{ sensor_id: number; register_id: string }>(
    `SELECT sensor_id, register_id FROM sensor_registers WHERE sensor_id = ANY($1::int[]) OR register_id = ANY($2::bigint[]) ORDER BY position`,
    [[...wanted.keys()], newRegisters],
  );
  const before = new Map<number, string[]>();
  for (const r of old) before.set(r.sensor_id, [...(before.get(r.sensor_id) ?? []), r.register_id]);
  // Unchanged lists are not rewritten, so the rows (and the configuration cache) stay as they are.
  const differs =
    [...wanted].some(([id, regs]) => !sameList(regs, before.get(id) ?? [])) ||
    old.some((r) => !wanted.has(r.sensor_id));
  if (!differs) return;

  await db.query(
    `DELETE FROM sensor_registers WHERE sensor_id = ANY($1::int[]) OR register_id = ANY($2::bigint[])`,
    [[...wanted.keys()], newRegisters],
  );
  const rows = listed.flatMap((s) =>
    s.RegisterIDs!.map((r, position) => ({
      register_id: String(r),
      sensor_id: s.SiteSensorID,
      site_id: s.SiteID,
      position,
    })),
  );
  await upsertRows(
    db,
    {
      table: 'sensor_registers',
      key: ['register_id'],
      columns: cols(
        ['register_id', 'bigint'],
        ['sensor_id', 'int'],
        ['site_id', 'int'],
        ['position', 'int'],
      ),
      stamp: false,
    },
    rows,
    new Date(),
  );
}

export async function replaceRoles<K extends string>(
  db: Queryable,
  kind: 'meter' | 'pump' | 'tank',
  equipment: (EquipmentIn & Record<K, number>)[],
  idField: K,
) {
  const listed = equipment.filter(
    (e): e is typeof e & Required<Pick<EquipmentIn, 'Registers'>> => !!e.Registers,
  );
  if (!listed.length) return;
  const ids = listed.map((e) => e[idField]);
  const old = await db.query<{ equipment_id: number; role: string; register_id: string | null }>(
    `SELECT equipment_id, role, register_id FROM equipment_register_roles WHERE equipment_kind = $1 AND equipment_id = ANY($2::int[]) ORDER BY position`,
    [kind, ids],
  );
  const key = (pairs: [string, unknown][]) =>
    pairs.map(([r, v]) => `${r}=${v === null ? '' : String(v)}`);
  const before = new Map<number, [string, unknown][]>();
  for (const r of old)
    before.set(r.equipment_id, [...(before.get(r.equipment_id) ?? []), [r.role, r.register_id]]);
  const changed = listed
    .filter((e) => !sameList(key(Object.entries(e.Registers)), key(before.get(e[idField]) ?? [])))
    .map((e) => e[idField]);
  if (!changed.length) return;

  await db.query(
    `DELETE FROM equipment_register_roles WHERE equipment_kind = $1 AND equipment_id = ANY($2::int[])`,
    [kind, changed],
  );
  const rows = listed
    .filter((e) => changed.includes(e[idField]))
    .flatMap((e) =>
      Object.entries(e.Registers).map(([role, reg], position) => ({
        equipment_kind: kind,
        equipment_id: e[idField],
        role,
        register_id: reg === null ? null : String(reg),
        site_id: e.SiteID,
        position,
      })),
    );
  await upsertRows(
    db,
    {
      table: 'equipment_register_roles',
      key: ['equipment_kind', 'equipment_id', 'role'],
      columns: cols(
        ['equipment_kind', 'text'],
        ['equipment_id', 'int'],
        ['role', 'text'],
        ['register_id', 'bigint'],
        ['site_id', 'int'],
        ['position', 'int'],
      ),
      stamp: false,
    },
    rows,
    new Date(),
  );
}

/** Scalings, triggers and tank-group connections of each listed actuator are replaced as given. */
export async function replaceActuatorChildren(db: Queryable, actuators: ActuatorIn[]) {
  const site = (r: ActuatorChildIn) => ({
    site_id: actuators.find((a) => a.SiteActuatorID === r.SiteActuatorID)!.SiteID,
  });
  const lists: {
    field: 'SensorScalings' | 'SensorTriggers' | 'TankGroupConnections';
    table: string;
    key: string;
    fields: Field[];
    extra: (r: ActuatorChildIn, i: number) => Record<string, unknown>;
    more: { column: string; kind: ColumnKind }[];
  }[] = [
    {
      field: 'SensorScalings',
      table: 'actuator_sensor_scalings',
      key: 'scaling_id',
      fields: SENSOR_SCALING,
      extra: (r) => ({
        ...site(r),
        scale_points:
          r.ScalePoints == null
            ? null
            : typeof r.ScalePoints === 'string'
              ? r.ScalePoints
              : JSON.stringify(r.ScalePoints),
      }),
      more: cols(['scale_points', 'text']),
    },
    {
      field: 'SensorTriggers',
      table: 'actuator_sensor_triggers',
      key: 'actuator_id, position',
      fields: SENSOR_TRIGGER,
      extra: (r, i) => ({ ...site(r), position: i }),
      more: cols(['position', 'int']),
    },
    {
      field: 'TankGroupConnections',
      table: 'actuator_tank_group_connections',
      key: 'connection_id',
      fields: TANK_GROUP_CONNECTION,
      extra: site,
      more: [],
    },
  ];
  for (const l of lists) {
    const listed = actuators.filter((a) => a[l.field]);
    if (!listed.length) continue;
    await db.query(`DELETE FROM ${l.table} WHERE actuator_id = ANY($1::int[])`, [
      listed.map((a) => a.SiteActuatorID),
    ]);
    const rows = listed.flatMap((a) => toRows(l.fields, a[l.field] ?? [], l.extra));
    await upsertRows(
      db,
      {
        table: l.table,
        key: [l.key],
        columns: [...columnsOf(l.fields), ...cols(['site_id', 'int']), ...l.more],
        stamp: false,
      },
      rows,
      new Date(),
    );
  }
}
