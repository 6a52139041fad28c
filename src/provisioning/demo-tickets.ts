import { makeMotionPng, makeTicketPng } from './png.js';
import type { DemoSite } from './demo-site.js';

// The demo site's cameras and tickets: transactions with their change logs, and the ticket and
// motion photos of the newest ones.

/** Pixels of the demo's ticket photos and motion frames: larger than the console's thumbnails (120×90). */
export const TICKET_SIZE = [300, 400] as const;
export const MOTION_SIZE = [400, 225] as const;

const HAULERS = [
  'Lone Star Hauling',
  'Red Mesa Trucking',
  'Caprock Fluid Transport',
  'Sandhills Water Haulers',
];
const DRIVERS = ['J. Ortega', 'M. Reyes', 'T. Walker', 'D. Nguyen', 'R. Castillo', 'A. Brooks'];
const FLUIDS = ['Produced Water', 'Flowback', 'Brine'];

/** What a haul-off ticket's note says about the tank group it was loaded from (the demo history reads it). */
export const HAULED_FROM = 'Hauled off from ';

/**
 * Adds the site's two cameras, its transactions (6 hours apart, the newest just before `now`) and
 * images. Each transaction is a truck hauling off from one of the site's tank groups (`tanks`), in
 * turn; its note names the tank group, and the demo history lowers that group's level by the
 * ticket's volume at its time (src/telemetry/demo.ts).
 */
export function addTickets(
  site: DemoSite,
  counts: { transactions: number; images: number },
  companyName: (c: number) => string,
  tanks: number[] = [],
): void {
  const { doc, siteId, id, rnd, pick, round, now } = site;
  const groups = tanks.map((t) => doc.tankGroups.find((g) => g.SiteTankGroupID === t)!);
  const cameras = [id(701), id(702)];
  cameras.forEach((c, i) =>
    doc.cameras.push({ CameraID: c, SiteID: siteId, Name: i ? 'Offload Bay' : 'Gate' }),
  );

  const nTx = counts.transactions;
  for (let i = 1; i <= nTx; i++) {
    const txId = id(1000 + i);
    const when = new Date(now - (nTx - i) * 6 * 3_600_000 - Math.floor(rnd() * 3_600_000));
    const volume = round(80 + rnd() * 50, 1);
    const tank = groups.length ? groups[(i - 1) % groups.length] : undefined;
    const fluid = pick(FLUIDS);
    doc.transactions.push({
      TransactionID: txId,
      TicketNumber: siteId * 100_000 + i,
      SiteID: siteId,
      TransactionDate: when.toISOString(),
      HaulerCompany: pick(HAULERS),
      DriverName: pick(DRIVERS),
      TruckNumber: `T-${100 + Math.floor(rnd() * 900)}`,
      FluidType: tank?.IsOil ? 'Skim Oil' : fluid,
      Volume: volume,
      VolumeUnits: 'bbl',
      Notes: tank ? `${HAULED_FROM}${tank.Name}` : null,
      Changes: [
        {
          LogTypeName: 'Main Ticket',
          LogType: 1,
          Editor: 'Field Operator',
          EditorCompany: companyName(1),
          ChangeDate: new Date(when.getTime() + 1_800_000).toISOString(),
          ChangeItems: [
            {
              PropertyName: 'Volume',
              OriginalValue: String(round(volume + 2.5, 1)),
              NewValue: String(volume),
            },
          ],
        },
        ...(i % 4 === 0
          ? [
              {
                LogTypeName: 'Disposal Fee',
                LogType: 4,
                Editor: 'Billing Desk',
                EditorCompany: companyName(1),
                ChangeDate: new Date(when.getTime() + 7_200_000).toISOString(),
                ChangeItems: [{ PropertyName: 'Rate', OriginalValue: '0.45', NewValue: '0.50' }],
              },
            ]
          : []),
      ],
    });
  }
  const nImages = Math.min(counts.images, nTx);
  for (let i = 1; i <= nImages; i++) {
    const tx = doc.transactions[doc.transactions.length - i];
    const hex = (n: number) => n.toString(16).padStart(12, '0');
    doc.images.push({
      UUID: `7e1c0000-0000-4000-8000-${hex(siteId * 1000 + i)}`,
      Kind: 'ticket',
      SiteID: siteId,
      TransactionID: tx.TransactionID,
      CapturedAt: tx.TransactionDate,
      ContentType: 'image/png',
      DataBase64: makeTicketPng(TICKET_SIZE[0], TICKET_SIZE[1], siteId + i).toString('base64'),
    });
    doc.images.push({
      UUID: `9a0f0000-0000-4000-8000-${hex(siteId * 1000 + i)}`,
      Kind: 'motion',
      SiteID: siteId,
      TransactionID: tx.TransactionID,
      CameraID: cameras[i % 2],
      CapturedAt: tx.TransactionDate,
      ContentType: 'image/png',
      DataBase64: makeMotionPng(MOTION_SIZE[0], MOTION_SIZE[1], siteId * 7 + i).toString('base64'),
    });
  }
}
