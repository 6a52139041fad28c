import type { Database, Queryable } from '../db/index.js';
import { upsertClient } from '../auth/clients.js';
import {
  ACTUATOR,
  CAMERA,
  COMPANY,
  FLOW_METER,
  MODBUS_DEVICE,
  PUMP,
  REGISTER,
  SENSOR,
  SITE,
  TANK_GROUP,
  TRANSACTION,
  type Field,
} from '../schemas/records.js';
import { checkShape, checkUnique, normaliseTimes } from './checks.js';
import { collectReferences } from './collect-references.js';
import type { ProvisioningDocument } from './document.js';
import { linkedSites, readLinks, recordLinkChanges } from './link-changes.js';
import { replaceActuatorChildren, replaceRoles, replaceSensorLinks } from './links.js';
import { columnsOf, toRows, upsertRows } from './upsert.js';
import { checkImages, upsertChanges, upsertImages } from './tickets.js';
import { publishConfigChanges } from '../stream/publish.js';
import { checkSparkplugMetrics, upsertSparkplugMetrics } from './sparkplug.js';
import { checkAlarmRules, upsertAlarmRules } from './alarm-rules.js';
import { checkNotifications, upsertNotifications } from './notifications.js';

export { ImportError } from './checks.js';

/** Per list of the document: how many records it held and how many were new or changed. */
export type ImportSummary = Record<string, { received: number; changed: number }>;

export interface ImportOptions {
  now?: Date;
  progress?: (message: string) => void;
  /** Runs in the import's transaction once the document's shape is known good, before any check against the database; a throw changes nothing. */
  authorize?: (tx: Queryable, doc: ProvisioningDocument) => Promise<void>;
}

/**
 * Upserts a provisioning document in one transaction. Everything is checked before anything is
 * written; a bad document throws ImportError naming its first bad record and changes nothing.
 */
export async function importDocument(
  db: Database,
  input: unknown,
  opts: ImportOptions = {},
): Promise<ImportSummary> {
  const doc = checkShape(input);
  const stamp = opts.now ?? new Date();
  const progress = opts.progress ?? (() => {});
  normaliseTimes('modbusDevices', doc.modbusDevices, MODBUS_DEVICE);
  normaliseTimes('actuators', doc.actuators, ACTUATOR);
  normaliseTimes('transactions', doc.transactions, TRANSACTION);
  doc.transactions?.forEach((t, i) =>
    normaliseTimes(`transactions[${i}].Changes`, t.Changes, [
      { name: 'ChangeDate', column: '', kind: 'time', required: true },
    ]),
  );
  normaliseTimes('images', doc.images, [
    { name: 'CapturedAt', column: '', kind: 'time', required: false },
  ]);
  const uniques: [keyof ProvisioningDocument, string][] = [
    ['companies', 'CompanyID'],
    ['sites', 'SiteID'],
    ['clients', 'clientId'],
    ['modbusDevices', 'SiteModbusInOutDeviceID'],
    ['registers', 'SiteIODeviceRegisterID'],
    ['sensors', 'SiteSensorID'],
    ['flowMeters', 'SiteFlowMeterID'],
    ['pumps', 'SitePumpID'],
    ['tankGroups', 'SiteTankGroupID'],
    ['actuators', 'SiteActuatorID'],
    ['cameras', 'CameraID'],
    ['transactions', 'TransactionID'],
    ['images', 'UUID'],
    ['alarmRules', 'AlarmRuleID'],
    ['notificationChannels', 'ChannelID'],
    ['notificationPolicies', 'PolicyID'],
  ];
  for (const [list, key] of uniques) checkUnique(list, doc[list], key);
  checkImages(doc);

  return db.transaction(async (tx) => {
    await opts.authorize?.(tx, doc);
    const refs = await collectReferences(tx, doc);
    const bindings = checkSparkplugMetrics(doc, refs);
    const alarmRules = checkAlarmRules(doc, refs);
    await checkNotifications(tx, doc);
    const linkSites = await linkedSites(tx, doc);
    const linksBefore = await readLinks(tx, linkSites);
    const summary: ImportSummary = {};
    const count = (list: string, received: number, changed: number) => {
      summary[list] = { received, changed };
      if (received) progress(`${list}: ${received} received, ${changed} new or changed`);
    };
    /** Upserts the records of a list into its table (TABLES), and counts them. */
    const upsertList = async <L extends keyof typeof TABLES>(
      list: L,
      extra?: (r: RecordOf<L>) => Record<string, unknown>,
    ) => {
      const [table, key, fields] = TABLES[list];
      const records: readonly RecordOf<L>[] = doc[list] ?? [];
      const columns = [...columnsOf(fields), ...extraColumns(table)];
      const rows = toRows(fields, records, extra);
      const changed = await upsertRows(
        tx,
        { table, key: [key], columns, stamp: true },
        rows,
        stamp,
      );
      count(list, records.length, changed);
    };

    await upsertList('companies');
    await upsertList('sites', (r) => ({ comm_loss_minutes: r.CommLossMinutes ?? null }));
    await upsertList('modbusDevices');
    await upsertList('registers', (r) => ({
      site_id: refs.siteOf('device', r.SiteModbusInOutDeviceID, ''),
    }));
    await upsertList('sensors', (r) => ({ step: r.Step ?? false }));
    await upsertList('flowMeters');
    await upsertList('pumps');
    await upsertList('tankGroups');
    await upsertList('actuators');
    await replaceSensorLinks(tx, doc.sensors ?? []);
    await replaceRoles(tx, 'meter', doc.flowMeters ?? [], 'SiteFlowMeterID');
    await replaceRoles(tx, 'pump', doc.pumps ?? [], 'SitePumpID');
    await replaceRoles(tx, 'tank', doc.tankGroups ?? [], 'SiteTankGroupID');
    await recordLinkChanges(tx, linksBefore, await readLinks(tx, linkSites), stamp);
    await replaceActuatorChildren(tx, doc.actuators ?? []);
    await upsertList('cameras');
    await upsertList('transactions');
    count(
      'changes',
      doc.transactions?.reduce((n, t) => n + (t.Changes?.length ?? 0), 0) ?? 0,
      await upsertChanges(tx, doc.transactions ?? []),
    );
    count('images', doc.images?.length ?? 0, await upsertImages(tx, doc.images ?? [], stamp));
    count('sparkplugMetrics', bindings.length, await upsertSparkplugMetrics(tx, bindings, stamp));
    count('alarmRules', doc.alarmRules?.length ?? 0, await upsertAlarmRules(tx, alarmRules, stamp));
    const notified = await upsertNotifications(tx, doc);
    count('notificationChannels', doc.notificationChannels?.length ?? 0, notified.channels);
    count('notificationPolicies', doc.notificationPolicies?.length ?? 0, notified.policies);
    for (const c of doc.clients ?? []) await upsertClient(tx, c);
    count('clients', doc.clients?.length ?? 0, doc.clients?.length ?? 0);
    // Live stream subscribers re-read the configuration of these sites. Actuator children carry no
    // change stamp, so an actuator that lists any counts as a change of its site.
    const withChildren = (doc.actuators ?? []).filter(
      (a) => a.SensorScalings || a.SensorTriggers || a.TankGroupConnections,
    );
    await publishConfigChanges(
      tx,
      stamp,
      withChildren.map((a) => a.SiteID),
    );
    return summary;
  });
}

/** The table, key column and fields of each list of interface records. */
const TABLES = {
  companies: ['companies', 'company_id', COMPANY],
  sites: ['sites', 'site_id', SITE],
  modbusDevices: ['modbus_devices', 'device_id', MODBUS_DEVICE],
  registers: ['registers', 'register_id', REGISTER],
  sensors: ['sensors', 'sensor_id', SENSOR],
  flowMeters: ['flow_meters', 'meter_id', FLOW_METER],
  pumps: ['pumps', 'pump_id', PUMP],
  tankGroups: ['tank_groups', 'tank_group_id', TANK_GROUP],
  actuators: ['actuators', 'actuator_id', ACTUATOR],
  cameras: ['cameras', 'camera_id', CAMERA],
  transactions: ['transactions', 'transaction_id', TRANSACTION],
} satisfies Partial<Record<keyof ProvisioningDocument, [string, string, Field[]]>>;
type RecordOf<L extends keyof ProvisioningDocument> = NonNullable<ProvisioningDocument[L]>[number];

/** Columns a table has beyond its interface record (derived at import). */
const extraColumns = (table: string) =>
  table === 'sites'
    ? [{ column: 'comm_loss_minutes', kind: 'int' as const }]
    : table === 'registers'
      ? [{ column: 'site_id', kind: 'int' as const }]
      : table === 'sensors'
        ? [{ column: 'step', kind: 'bool' as const }]
        : [];
