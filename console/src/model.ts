import { get } from './api.js';
import type { Kind, Severity, Site, SiteRecord } from './api-schema.js';

// The few helpers that turn the API's answers (api-schema.ts has their types, generated from the
// OpenAPI document) into what the pages show.

export const SEVERITIES: Severity[] = ['critical', 'major', 'minor', 'warning', 'info'];
export const isSeverity = (s: string | null): s is Severity => SEVERITIES.includes(s as Severity);

export interface Equipment {
  kind: Kind;
  id: number;
  name: string;
  /** A sensor's units, a meter's or a tank group's volume units. */
  units?: string;
  /** A meter's flow rate units. */
  flowUnits?: string;
  /** A tank group's level units. */
  levelUnits?: string;
}

/** A tank group's level units: its level registers', feet where they have none. */
export const levelUnits = (e: { levelUnits?: string }): string => e.levelUnits || 'ft';

export const KIND_LABEL: Record<Kind, string> = {
  sensor: 'Sensors',
  meter: 'Flow meters',
  pump: 'Pumps',
  tank: 'Tank groups',
};
/** The id field of a reading record of each kind. */
export const ID_FIELD: Record<Kind, string> = {
  sensor: 'sensorID',
  meter: 'flowMeterID',
  pump: 'sitePumpID',
  tank: 'siteTankGroupID',
};
/** Kind of an alarm's EquipmentTypeID, as the alarm list writes them. */
export const ALARM_KIND: Record<number, Kind> = { 1: 'meter', 2: 'pump', 3: 'tank', 5: 'sensor' };

export interface SiteEquipment {
  site: SiteRecord;
  equipment: Equipment[];
}

/** A site's record and its equipment, from its light configuration. */
export async function loadSiteEquipment(
  siteId: number,
  signal?: AbortSignal,
): Promise<SiteEquipment> {
  const c = await get('/v1/config/site/light', { siteId }, signal);
  return {
    site: c.site,
    equipment: [
      ...c.sensors.map((s) => ({
        kind: 'sensor' as const,
        id: s.sensor.SiteSensorID,
        name: s.sensor.Name,
        units: s.sensor.Units,
      })),
      ...c.meters.map((m) => ({
        kind: 'meter' as const,
        id: m.meter.SiteFlowMeterID,
        name: m.meter.Name,
        units: m.meter.VolumeUnits,
        flowUnits: m.meter.FlowUnits ?? undefined,
      })),
      ...c.pumps.map((p) => ({ kind: 'pump' as const, id: p.pump.SitePumpID, name: p.pump.Name })),
      // A tank group's units are those of the registers of its roles.
      ...c.tankGroups.map((t) => ({
        kind: 'tank' as const,
        id: t.tankGroup.SiteTankGroupID,
        name: t.tankGroup.Name,
        units: t.tankRegisters.Volume?.Units ?? undefined,
        levelUnits:
          t.tankRegisters.EntryLevel?.Units ?? t.tankRegisters.ExitLevel?.Units ?? undefined,
      })),
    ],
  };
}

/** Every site of the client (for pickers), a page of 500 at a time, at most 20 pages. */
export async function loadAllSites(signal?: AbortSignal): Promise<Site[]> {
  const all: Site[] = [];
  for (let page = 1; page <= 20; page++) {
    const p = await get('/v1/sites', { page, perPage: 500, sortBy: 'name' }, signal);
    all.push(...p.data);
    if (page >= p.totalPages) break;
  }
  return all;
}
