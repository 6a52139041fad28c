import { api } from './api.js';

// The shapes of the API answers the console reads (the OpenAPI document has them all), and the
// few helpers that turn them into what the pages show.

export interface Site {
  SiteID: number;
  Name: string;
  CompanyName: string;
  Active: boolean;
  TimeZone: string | null;
  LastCommunication?: string | null;
  ActiveAlarmCount?: number;
}

export interface SitePage {
  data: Site[];
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

export interface Alarm {
  SiteAlarmLogID: string;
  SiteID: number;
  EquipmentTypeID: number | null;
  EquipmentID: string | null;
  AlarmType: string;
  Severity: string;
  Message: string;
  Value: number | null;
  FirstSeen: string;
  LastSeen: string;
  Occurrences: number;
}

export const SEVERITIES = ['critical', 'major', 'minor', 'warning', 'info'];

export interface Ticket {
  TransactionID: number;
  TicketNumber: number;
  SiteID: number;
  SiteName: string;
  TransactionDate: string;
  HaulerCompany: string | null;
  DriverName: string | null;
  TruckNumber: string | null;
  FluidType: string | null;
  Volume: number | null;
  VolumeUnits: string | null;
  Notes: string | null;
  TicketImageIDs: string[];
  MotionCaptureImageIDs?: string[];
}

export type Kind = 'sensor' | 'meter' | 'pump' | 'tank';

export interface Equipment {
  kind: Kind;
  id: number;
  name: string;
  units?: string;
}

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

interface SiteConfig {
  site: Site;
  sensors: { sensor: { SiteSensorID: number; Name: string; Units: string } }[];
  meters: { meter: { SiteFlowMeterID: number; Name: string; VolumeUnits?: string } }[];
  pumps: { pump: { SitePumpID: number; Name: string } }[];
  tankGroups: { tankGroup: { SiteTankGroupID: number; Name: string } }[];
}

export interface SiteEquipment {
  site: Site;
  equipment: Equipment[];
}

/** A site's record and its equipment, from its light configuration. */
export async function loadSiteEquipment(
  siteId: number,
  signal?: AbortSignal,
): Promise<SiteEquipment> {
  const c = await api<SiteConfig>(`/v1/config/site/light?siteId=${siteId}`, { signal });
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
      })),
      ...c.pumps.map((p) => ({ kind: 'pump' as const, id: p.pump.SitePumpID, name: p.pump.Name })),
      ...c.tankGroups.map((t) => ({
        kind: 'tank' as const,
        id: t.tankGroup.SiteTankGroupID,
        name: t.tankGroup.Name,
      })),
    ],
  };
}

/** Every site of the client (for pickers), a page of 500 at a time, at most 20 pages. */
export async function loadAllSites(signal?: AbortSignal): Promise<Site[]> {
  const all: Site[] = [];
  for (let page = 1; page <= 20; page++) {
    const p = await api<SitePage>(`/v1/sites?page=${page}&perPage=500&sortBy=name`, { signal });
    all.push(...p.data);
    if (page >= p.totalPages) break;
  }
  return all;
}
