import { useMemo, useState } from 'preact/hooks';
import { ApiError, post, saveAs, send } from '../api.js';
import type { Ticket } from '../api-schema.js';
import { formatNumber, formatTime, fromLocalInput, toLocalInput, zoneOf } from '../format.js';
import { Status, useLoad } from '../load.js';
import { loadAllSites } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { SiteSelect } from '../site-select.js';
import { TicketDetails } from '../ticket-details.js';
import { useSiteZone, useZone } from '../zone.js';

const DAY = 86_400_000;
/** The calendar day of an instant on the clock of a zone. */
const day = (ms: number, zone: string) => toLocalInput(ms, zone).slice(0, 10);
/** The day after a calendar day. */
const nextDay = (d: string) =>
  new Date(Date.parse(`${d}T00:00:00Z`) + DAY).toISOString().slice(0, 10);

/** Tickets: transactions in a range, each with its change history and images; a zip of the selection's images. */
export function TicketsPage() {
  const { query } = useRoute();
  const site = Number(query.get('site')) || 0;
  // Days are those of the zone shown: the site's when one site is chosen.
  const sites = useLoad((signal) => loadAllSites(signal), []);
  const siteRecord = site ? sites.data?.find((s) => s.SiteID === site) : undefined;
  useSiteZone(siteRecord ? siteRecord.TimeZone : undefined);
  const zone = zoneOf(useZone().choice, siteRecord?.TimeZone);
  const from = /^\d{4}-\d{2}-\d{2}$/.test(query.get('from') ?? '')
    ? query.get('from')!
    : day(Date.now() - 6 * DAY, zone);
  const to = /^\d{4}-\d{2}-\d{2}$/.test(query.get('to') ?? '')
    ? query.get('to')!
    : day(Date.now(), zone);
  const opened = Number(query.get('ticket')) || 0;
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/tickets', { site, from, to, ticket: opened, ...changes }), {
      replace: true,
    });
  const [selected, setSelected] = useState(new Set<number>());
  const [zipError, setZipError] = useState('');

  const load = useLoad(
    async (signal) => {
      const sites = await loadAllSites(signal);
      const siteIds = site ? [site] : sites.map((s) => s.SiteID);
      const body = {
        siteIds,
        start: new Date(fromLocalInput(`${from}T00:00`, zone)).toISOString(),
        end: new Date(fromLocalInput(`${nextDay(to)}T00:00`, zone)).toISOString(),
      };
      if (!siteIds.length) return { sites, tickets: [] as Ticket[], motion: false };
      // Motion captures need access to the cameras too; without it the tickets come without them.
      try {
        const tickets = await post(
          '/v1/transactions/logs/load',
          { ...body, motionCap: true },
          signal,
        );
        return { sites, tickets, motion: true };
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 403)) throw err;
        return {
          sites,
          tickets: await post('/v1/transactions/logs/load', body, signal),
          motion: false,
        };
      }
    },
    [site, from, to, zone, !site || !!sites.data],
  );
  const tickets = useMemo(
    () =>
      [...(load.data?.tickets ?? [])].sort((a, b) =>
        b.TransactionDate.localeCompare(a.TransactionDate),
      ),
    [load.data],
  );
  const chosen = tickets.filter((t) => selected.has(t.TransactionID));

  const downloadZip = async (kind: 'tickets' | 'motion-capture') => {
    setZipError('');
    const uuids = chosen
      .flatMap((t) => (kind === 'tickets' ? t.TicketImageIDs : (t.MotionCaptureImageIDs ?? [])))
      .slice(0, 500);
    try {
      await saveAs(
        await send(`/v1/images/${kind}` as const, { uuids }, { accept: 'application/zip' }),
        `${kind === 'tickets' ? 'ticket-images' : 'motion-captures'}.zip`,
      );
    } catch (err) {
      setZipError((err as Error).message);
    }
  };
  const count = (kind: 'tickets' | 'motion-capture') =>
    chosen.reduce(
      (n, t) =>
        n + (kind === 'tickets' ? t.TicketImageIDs : (t.MotionCaptureImageIDs ?? [])).length,
      0,
    );

  return (
    <section>
      <h1>Tickets</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <SiteSelect
            id="ticket-site"
            value={site}
            sites={sites.data}
            none="All sites"
            onChange={(v) => go({ site: v })}
          />
        </div>
        <div>
          <label for="ticket-from">From (day in {zone})</label>
          <input
            id="ticket-from"
            type="date"
            value={from}
            max={to}
            onChange={(e) => e.currentTarget.value && go({ from: e.currentTarget.value })}
          />
        </div>
        <div>
          <label for="ticket-to">To (day in {zone})</label>
          <input
            id="ticket-to"
            type="date"
            value={to}
            min={from}
            onChange={(e) => e.currentTarget.value && go({ to: e.currentTarget.value })}
          />
        </div>
      </form>
      <Status load={load} what="the tickets">
        {({ motion }) => (
          <>
            <p class="muted" aria-live="polite">
              {tickets.length} ticket{tickets.length === 1 ? '' : 's'} · {chosen.length} selected
              {!motion && ' · motion captures hidden (no access to the cameras)'}
            </p>
            <div class="actions">
              <button
                type="button"
                disabled={!count('tickets')}
                onClick={() => downloadZip('tickets')}
              >
                Download ticket images ({count('tickets')})
              </button>
              {motion && (
                <button
                  type="button"
                  disabled={!count('motion-capture')}
                  onClick={() => downloadZip('motion-capture')}
                >
                  Download motion captures ({count('motion-capture')})
                </button>
              )}
              {zipError && (
                <p class="error" role="alert">
                  {zipError}
                </p>
              )}
            </div>
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Select</th>
                    <th scope="col">Ticket</th>
                    <th scope="col">Date</th>
                    <th scope="col">Site</th>
                    <th scope="col">Hauler · driver · truck</th>
                    <th scope="col">Fluid</th>
                    <th scope="col">Volume</th>
                    <th scope="col">Images</th>
                  </tr>
                </thead>
                <tbody>
                  {tickets.map((t) => {
                    const open = opened === t.TicketNumber;
                    const images = t.TicketImageIDs.length + (t.MotionCaptureImageIDs?.length ?? 0);
                    return [
                      <tr key={t.TransactionID}>
                        <td>
                          <input
                            type="checkbox"
                            aria-label={`Select ticket ${t.TicketNumber}`}
                            checked={selected.has(t.TransactionID)}
                            onChange={(e) => {
                              const next = new Set(selected);
                              if (e.currentTarget.checked) next.add(t.TransactionID);
                              else next.delete(t.TransactionID);
                              setSelected(next);
                            }}
                          />
                        </td>
                        <td>
                          <button
                            type="button"
                            class="link"
                            aria-expanded={open}
                            onClick={() => go({ ticket: open ? '' : t.TicketNumber })}
                          >
                            {t.TicketNumber}
                          </button>
                        </td>
                        <td>{formatTime(t.TransactionDate)}</td>
                        <td>{t.SiteName}</td>
                        <td>
                          {[t.HaulerCompany, t.DriverName, t.TruckNumber]
                            .filter(Boolean)
                            .join(' · ')}
                        </td>
                        <td>{t.FluidType ?? '—'}</td>
                        <td class="num">
                          {formatNumber(t.Volume)} {t.VolumeUnits ?? ''}
                        </td>
                        <td class="num">{images}</td>
                      </tr>,
                      open && (
                        <tr key={`${t.TransactionID}-details`}>
                          <td colSpan={8}>
                            <TicketDetails ticket={t} />
                          </td>
                        </tr>
                      ),
                    ];
                  })}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Status>
    </section>
  );
}
