import { addActuators } from './demo-actuators.js';
import { addDemoAlarmManagement } from './demo-alarms.js';
import { addEquipment } from './demo-equipment.js';
import { startSite, type DemoDocument, type Draws } from './demo-site.js';
import { addTickets } from './demo-tickets.js';
import { random } from '../random.js';

// A realistic provisioning document: the demo data set of a fresh database, and a test and
// benchmark fixture (sizes and id offsets are parameters, so tests can import a second set).

export interface DemoOptions {
  /** Added to every id, so two generated documents do not collide. */
  idBase?: number;
  sites?: number;
  sensorsPerSite?: number;
  metersPerSite?: number;
  pumpsPerSite?: number;
  tanksPerSite?: number;
  actuatorsPerSite?: number;
  transactionsPerSite?: number;
  imagesPerSite?: number;
  /** Anchor of the generated transaction dates (the newest is a few hours before it). */
  now?: Date;
  /**
   * Limit rules, a communication-loss threshold and a notification policy (src/provisioning/demo-alarms.ts),
   * as the demo data set has them; off by default, so fixtures raise and notify nothing by themselves.
   */
  alarmManagement?: boolean;
}

const COMPANY_NAMES = [
  'Permian Water Services',
  'Basin Midstream Partners',
  'Delaware Produced Water',
  'High Plains Gathering',
];
const SITE_NAMES = [
  'Pecos SWD 1',
  'Mentone Tank Battery',
  'Orla Gathering Station',
  'Kermit Disposal',
  'Wink Booster',
  'Jal Water Hub',
];

export function generateDemo(opts: DemoOptions = {}): DemoDocument {
  const base = opts.idBase ?? 0;
  const nSites = opts.sites ?? 4;
  const rnd = random(base + 7);
  const draws: Draws = {
    rnd,
    pick: <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)],
    round: (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d,
    now: (opts.now ?? new Date()).getTime(),
  };
  const { round } = draws;
  const doc: DemoDocument = {
    companies: [],
    sites: [],
    modbusDevices: [],
    registers: [],
    sensors: [],
    flowMeters: [],
    pumps: [],
    tankGroups: [],
    actuators: [],
    cameras: [],
    transactions: [],
    images: [],
    sparkplugMetrics: [],
    alarmRules: [],
    notificationChannels: [],
    notificationPolicies: [],
  };
  const nCompanies = Math.min(2, nSites);
  const companyName = (c: number) => COMPANY_NAMES[(c - 1) % COMPANY_NAMES.length];
  for (let c = 1; c <= nCompanies; c++)
    doc.companies.push({
      CompanyID: base + c,
      Name: companyName(c),
    });

  for (let s = 1; s <= nSites; s++) {
    const siteId = base + s;
    const lat = round(31.4 + rnd() * 1.2, 5);
    const lon = round(-103.9 + rnd() * 1.5, 5);
    doc.sites.push({
      SiteID: siteId,
      Name: `${SITE_NAMES[(s - 1) % SITE_NAMES.length]}${s > SITE_NAMES.length ? ` ${s}` : ''}`,
      CompanyID: base + 1 + ((s - 1) % nCompanies),
      ProjectID: 100 + s,
      Active: s !== nSites || nSites < 3,
      Latitude: lat,
      Longitude: lon,
      TimeZone: 'America/Chicago',
    });
    const site = startSite(doc, draws, s, siteId, { lat, lon });
    const tanks = addEquipment(site, {
      sensors: opts.sensorsPerSite ?? 6,
      meters: opts.metersPerSite ?? 2,
      pumps: opts.pumpsPerSite ?? 2,
      tanks: opts.tanksPerSite ?? 2,
    });
    addActuators(site, opts.actuatorsPerSite ?? 1, tanks);
    addTickets(
      site,
      { transactions: opts.transactionsPerSite ?? 30, images: opts.imagesPerSite ?? 3 },
      companyName,
      tanks,
    );
  }
  if (opts.alarmManagement) addDemoAlarmManagement(doc, base);
  return doc;
}
