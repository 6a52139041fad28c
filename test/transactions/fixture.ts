import { generateDemo } from '../../src/provisioning/demo.js';

// The demo document at a fixed anchor (4 sites; 30 tickets a site, six hours apart; the last three
// of each site with a ticket photo and a motion capture), and the records the routes should give.

export const NOW = new Date('2026-06-01T12:00:00.000Z');
export const demo = () => generateDemo({ now: NOW });

const doc = demo();
const siteOf = new Map(doc.sites.map((s: any) => [s.SiteID, s]));
const companyName = new Map(doc.companies.map((c: any) => [c.CompanyID, c.Name]));
const imagesOf = (kind: string, txId: number) =>
  doc.images
    .filter((m: any) => m.Kind === kind && m.TransactionID === txId)
    .sort(
      (a: any, b: any) => a.CapturedAt.localeCompare(b.CapturedAt) || a.UUID.localeCompare(b.UUID),
    )
    .map((m: any) => m.UUID);

const byTime = (key: string) => (a: any, b: any) =>
  a[key].localeCompare(b[key]) || a.TransactionID - b.TransactionID;

/** TransactionLogDto records of the demo tickets of these sites in [start, end), in route order. */
export function expectedLogs(siteIds: number[], start: string, end: string, motionCap = false) {
  return doc.transactions
    .filter(
      (t: any) =>
        siteIds.includes(t.SiteID) && t.TransactionDate >= start && t.TransactionDate < end,
    )
    .sort(byTime('TransactionDate'))
    .map((t: any) => {
      const site: any = siteOf.get(t.SiteID);
      return {
        TransactionID: t.TransactionID,
        TicketNumber: t.TicketNumber,
        SiteID: t.SiteID,
        SiteName: site.Name,
        SiteCompany: companyName.get(site.CompanyID),
        TransactionDate: t.TransactionDate,
        HaulerCompany: t.HaulerCompany,
        DriverName: t.DriverName,
        TruckNumber: t.TruckNumber,
        FluidType: t.FluidType,
        Volume: t.Volume,
        VolumeUnits: t.VolumeUnits,
        Notes: t.Notes,
        TicketImageIDs: imagesOf('ticket', t.TransactionID),
        ...(motionCap ? { MotionCaptureImageIDs: imagesOf('motion', t.TransactionID) } : {}),
      };
    });
}

/** Change-log records (interface 2.9) of the demo in [start, end), in route order. */
export function expectedChanges(
  start: string,
  end: string,
  keep: (c: any) => boolean = () => true,
) {
  return doc.transactions
    .flatMap((t: any) =>
      t.Changes.map((c: any) => {
        const site: any = siteOf.get(t.SiteID);
        return {
          TransactionID: t.TransactionID,
          LogTypeName: c.LogTypeName,
          LogType: c.LogType,
          TicketNumber: t.TicketNumber,
          SiteID: t.SiteID,
          SiteName: site.Name,
          SiteCompany: companyName.get(site.CompanyID),
          Editor: c.Editor,
          EditorCompany: c.EditorCompany,
          ChangeDate: new Date(c.ChangeDate).toISOString(),
          ChangeItems: c.ChangeItems,
        };
      }),
    )
    .filter((c: any) => c.ChangeDate >= start && c.ChangeDate < end && keep(c))
    .sort(byTime('ChangeDate'));
}

export const transactions = () => doc.transactions as any[];
export const iso = (ms: number) => new Date(ms).toISOString();
export const DAY = 86_400_000;
