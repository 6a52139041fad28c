import type { Queryable } from '../db/index.js';
import { ImportError, References } from './checks.js';
import type { ProvisioningDocument, SitedIn } from './document.js';
import { sparkplugEquipment } from './sparkplug.js';
import { alarmRuleEquipment } from './alarm-rules.js';

// Every id a provisioning document names must be of a record that exists, in the document or the
// database, and at the site the naming record expects: checked before anything is written.

/** Checks every reference of the document against the document and the database. */
export async function collectReferences(
  db: Queryable,
  doc: ProvisioningDocument,
): Promise<References> {
  const refs = new References(db);
  refs.add('company', doc.companies, 'CompanyID', () => null);
  refs.add('site', doc.sites, 'SiteID', (r) => r.SiteID);
  refs.add('device', doc.modbusDevices, 'SiteModbusInOutDeviceID', (r) => r.SiteID);
  refs.add('sensor', doc.sensors, 'SiteSensorID', (r) => r.SiteID);
  refs.add('tank', doc.tankGroups, 'SiteTankGroupID', (r) => r.SiteID);
  refs.add('meter', doc.flowMeters, 'SiteFlowMeterID', (r) => r.SiteID);
  refs.add('pump', doc.pumps, 'SitePumpID', (r) => r.SiteID);
  refs.add('camera', doc.cameras, 'CameraID', (r) => r.SiteID);
  refs.add('transaction', doc.transactions, 'TransactionID', (r) => r.SiteID);

  await refs.load(
    'company',
    (doc.sites ?? []).map((s) => s.CompanyID),
  );
  doc.sites?.forEach((s, i) => refs.siteOf('company', s.CompanyID, `sites[${i}].CompanyID`));

  const siteLists = [
    'modbusDevices',
    'sensors',
    'flowMeters',
    'pumps',
    'tankGroups',
    'actuators',
    'cameras',
    'transactions',
    'images',
  ] as const;
  const sited = (l: (typeof siteLists)[number]): readonly Pick<SitedIn, 'SiteID'>[] => doc[l] ?? [];
  await refs.load(
    'site',
    siteLists.flatMap((l) => sited(l).map((r) => r.SiteID)),
  );
  for (const l of siteLists)
    sited(l).forEach((r, i) => refs.siteOf('site', r.SiteID, `${l}[${i}].SiteID`));

  await refs.load(
    'device',
    (doc.registers ?? []).map((r) => r.SiteModbusInOutDeviceID),
  );
  doc.registers?.forEach((r, i) =>
    refs.siteOf('device', r.SiteModbusInOutDeviceID, `registers[${i}].SiteModbusInOutDeviceID`),
  );
  refs.add('register', doc.registers, 'SiteIODeviceRegisterID', (r) =>
    refs.siteOf('device', r.SiteModbusInOutDeviceID, ''),
  );

  // Registers named by sensors and register roles: they must exist at the same site.
  const roleLists = ['flowMeters', 'pumps', 'tankGroups'] as const;
  await refs.load('register', [
    ...(doc.sensors ?? []).flatMap((s) => s.RegisterIDs ?? []),
    ...roleLists.flatMap((l) => (doc[l] ?? []).flatMap((e) => Object.values(e.Registers ?? {}))),
  ]);
  const claimedBy = new Map<string, number>();
  doc.sensors?.forEach((s, i) =>
    s.RegisterIDs?.forEach((id, j) => {
      const path = `sensors[${i}].RegisterIDs[${j}]`;
      refs.siteOf('register', id, path, s.SiteID);
      const other = claimedBy.get(String(id));
      if (other !== undefined && other !== s.SiteSensorID)
        throw new ImportError(path, `register ${id} is already read by sensor ${other}`);
      claimedBy.set(String(id), s.SiteSensorID);
    }),
  );
  for (const l of roleLists)
    doc[l]?.forEach((e, i) => {
      for (const [role, id] of Object.entries(e.Registers ?? {}))
        if (id !== null) refs.siteOf('register', id, `${l}[${i}].Registers.${role}`, e.SiteID);
    });

  // Actuator children name sensors and tank groups of the actuator's own site.
  await refs.load(
    'sensor',
    (doc.actuators ?? []).flatMap((a) =>
      [...(a.SensorScalings ?? []), ...(a.SensorTriggers ?? [])].map((c) => c.SiteSensorID),
    ),
  );
  await refs.load(
    'tank',
    (doc.actuators ?? []).flatMap((a) =>
      (a.TankGroupConnections ?? []).map((c) => c.SiteTankGroupID),
    ),
  );
  doc.actuators?.forEach((a, i) => {
    const children = {
      SensorScalings: a.SensorScalings,
      SensorTriggers: a.SensorTriggers,
      TankGroupConnections: a.TankGroupConnections,
    };
    for (const [list, items] of Object.entries(children))
      items?.forEach((c, j) => {
        const path = `actuators[${i}].${list}[${j}]`;
        if (c.SiteActuatorID !== a.SiteActuatorID)
          throw new ImportError(
            `${path}.SiteActuatorID`,
            `must be ${a.SiteActuatorID}, the actuator it is listed under`,
          );
        if (c.SiteSensorID !== undefined)
          refs.siteOf('sensor', c.SiteSensorID, `${path}.SiteSensorID`, a.SiteID);
        if (c.SiteTankGroupID !== undefined)
          refs.siteOf('tank', c.SiteTankGroupID, `${path}.SiteTankGroupID`, a.SiteID);
      });
  });

  // A client is given sites and cameras that exist (in the document or the database).
  const listed = (v: number[] | '*' | undefined) => (Array.isArray(v) ? v : []);
  await refs.load(
    'site',
    (doc.clients ?? []).flatMap((c) => listed(c.siteIds)),
  );
  await refs.load(
    'camera',
    (doc.clients ?? []).flatMap((c) => listed(c.cameraIds)),
  );
  doc.clients?.forEach((c, i) => {
    listed(c.siteIds).forEach((id, j) => refs.siteOf('site', id, `clients[${i}].siteIds[${j}]`));
    listed(c.cameraIds).forEach((id, j) =>
      refs.siteOf('camera', id, `clients[${i}].cameraIds[${j}]`),
    );
  });

  await refs.load(
    'transaction',
    (doc.images ?? []).map((m) => m.TransactionID),
  );
  await refs.load(
    'camera',
    (doc.images ?? []).map((m) => m.CameraID),
  );
  doc.images?.forEach((m, i) => {
    if (m.TransactionID != null)
      refs.siteOf('transaction', m.TransactionID, `images[${i}].TransactionID`, m.SiteID);
    if (m.CameraID != null) refs.siteOf('camera', m.CameraID, `images[${i}].CameraID`, m.SiteID);
  });
  // Equipment bound to Sparkplug metrics (checked with the bindings, checkSparkplugMetrics).
  for (const [kind, ids] of sparkplugEquipment(doc)) await refs.load(kind, ids);
  // Equipment watched by alarm rules (checked with the rules, checkAlarmRules).
  for (const [kind, ids] of alarmRuleEquipment(doc)) await refs.load(kind, ids);
  return refs;
}
