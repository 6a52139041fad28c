import { useEffect, useMemo, useState } from 'preact/hooks';
import { post } from '../api.js';
import type { Alarm, Kind, StreamEvents } from '../api-schema.js';
import { AlarmTable } from '../alarm-table.js';
import { applyAlarmEvent } from '../alarm-store.js';
import { applyEdgeEvent, EdgeHealth, edgeKey, type EdgeState } from '../edge-health.js';
import { ago, formatNumber, formatTime, isSilent, toLocalInput } from '../format.js';
import { Status, useLoad } from '../load.js';
import { ID_FIELD, KIND_LABEL, levelUnits, loadSiteEquipment, type Equipment } from '../model.js';
import { Link, withQuery } from '../router.js';
import { openStream, type StreamState } from '../stream.js';
import { currentZone, useSiteZone } from '../zone.js';

type Reading = Record<string, unknown> & { timestamp: string };
type Current = StreamEvents['snapshot']['sites'][number]['Current'];
const SNAPSHOT_KEYS: Record<keyof Current, Kind> = {
  sensors: 'sensor',
  meters: 'meter',
  pumps: 'pump',
  tankGroups: 'tank',
};
const DAY = 86_400_000;
/** What the live indicator says: "Live" only while events or heartbeats keep coming. */
const LIVE_LABEL: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  stale: 'Stale: nothing heard',
  reconnecting: 'Reconnecting…',
  stopped: 'Stopped',
};

/** What a reading of each kind shows: its main figures with units. */
function describe(e: Equipment, r: Reading | undefined): string {
  if (!r) return 'no reading yet';
  const n = (k: string, unit = '') =>
    `${formatNumber(r[k])}${unit && typeof r[k] === 'number' ? ` ${unit}` : ''}`;
  switch (e.kind) {
    case 'sensor':
      return n('value', e.units);
    case 'meter':
      return `${n('totalVolume', e.units)} total · ${n('flowRate', e.flowUnits)}${e.flowUnits ? '' : ' rate'}`;
    case 'pump':
      return `${r.running === true ? 'Running' : r.running === false ? 'Stopped' : '—'} · ${n('frequency', 'Hz')} · ${n('pressure', 'psi')}`;
    case 'tank':
      return `entry ${n('entryTankLevel', levelUnits(e))} · exit ${n('exitTankLevel', levelUnits(e))} · ${n('totalVolume', e.units)} total`;
  }
}

/** One site: its equipment with current values kept live by the stream, its active alarms, recent tickets. */
export function SitePage({ siteId }: { siteId: number }) {
  const config = useLoad((signal) => loadSiteEquipment(siteId, signal), [siteId]);
  useSiteZone(config.data ? config.data.site.TimeZone : undefined);
  const [current, setCurrent] = useState(new Map<string, Reading>());
  const [alarms, setAlarms] = useState<Alarm[] | undefined>();
  const [lastComm, setLastComm] = useState<string | null>(null);
  const [live, setLive] = useState<StreamState>('connecting');
  const [changed, setChanged] = useState(new Set<string>());
  const [edge, setEdge] = useState(new Map<string, EdgeState>());

  useEffect(() => {
    setAlarms(undefined);
    setCurrent(new Map());
    return openStream(
      [siteId],
      ({ event, data }) => {
        if (event === 'snapshot') {
          const site = data.sites.find((s) => s.SiteID === siteId);
          if (!site) return;
          const map = new Map<string, Reading>();
          for (const [key, kind] of Object.entries(SNAPSHOT_KEYS) as [keyof Current, Kind][])
            for (const r of site.Current?.[key] ?? [])
              map.set(`${kind}:${r[ID_FIELD[kind]]}`, r as Reading);
          setCurrent(map);
          setAlarms(site.ActiveAlarms);
          setLastComm(site.LastCommunication);
          setEdge(new Map(site.Edge.map((e) => [edgeKey(e), e])));
        } else if (event === 'reading' && data.siteId === siteId) {
          const kind = data.kind;
          // The record as stored: the document leaves its fields open; every one has a timestamp.
          const record = data.record as Reading;
          const key = `${kind}:${record[ID_FIELD[kind]]}`;
          setCurrent((m) => new Map(m).set(key, record));
          setChanged((s) => new Set(s).add(key));
          setTimeout(() => setChanged((s) => (s.delete(key), new Set(s))), 2000);
          setLastComm((t) => (!t || record.timestamp > t ? record.timestamp : t));
        } else if (event === 'edge' && data.siteId === siteId) {
          setEdge((states) => applyEdgeEvent(states, data));
        } else if (event === 'alarm' && data.siteId === siteId) {
          setAlarms((list = []) => applyAlarmEvent(list, data.status, data.alarm));
        }
      },
      setLive,
    );
  }, [siteId]);

  const names = useMemo(
    () => new Map((config.data?.equipment ?? []).map((e) => [`${e.kind}:${e.id}`, e.name])),
    [config.data],
  );

  return (
    <Status load={config} what="the site">
      {({ site, equipment }) => (
        <section>
          <p class="crumbs">
            <Link href="/">Sites</Link> › {site.Name}
          </p>
          <h1>{site.Name}</h1>
          <p class="muted">
            {site.CompanyName} · {site.Active ? 'Active' : 'Inactive'} · time zone{' '}
            {site.TimeZone ?? 'UTC'} · last communication{' '}
            {isSilent(lastComm) && <span class="badge warn">Silent</span>}{' '}
            <span title={formatTime(lastComm)}>{ago(lastComm)}</span> ·{' '}
            <span class={`live ${live}`} role="status">
              {LIVE_LABEL[live]}
            </span>
          </p>

          <h2>Active alarms</h2>
          <p>
            <Link href={`/sites/${siteId}/alarm-performance`}>Alarm performance</Link> of this site:
            alarm rate, floods, top and chattering alarms.
          </p>
          {alarms ? (
            <AlarmTable
              alarms={alarms}
              names={names}
              onResolved={(a) =>
                setAlarms((l) => l?.filter((x) => x.SiteAlarmLogID !== a.SiteAlarmLogID))
              }
            />
          ) : (
            <p class="loading" role="status">
              Loading alarms…
            </p>
          )}

          <h2>Equipment</h2>
          <div class="groups">
            {(Object.keys(KIND_LABEL) as Kind[]).map((kind) => {
              const list = equipment.filter((e) => e.kind === kind);
              if (!list.length) return null;
              return (
                <div class="group" key={kind}>
                  <h3>{KIND_LABEL[kind]}</h3>
                  <table class="equipment">
                    <tbody>
                      {list.map((e) => {
                        const key = `${e.kind}:${e.id}`;
                        const r = current.get(key);
                        return (
                          <tr key={key} class={changed.has(key) ? 'flash' : undefined}>
                            <th scope="row">{e.name}</th>
                            <td class="value">{describe(e, r)}</td>
                            <td class="when" title={formatTime(r?.timestamp)}>
                              {r ? ago(r.timestamp) : ''}
                            </td>
                            <td>
                              <Link
                                href={withQuery('/charts', {
                                  site: siteId,
                                  kind: e.kind,
                                  id: e.id,
                                })}
                                aria-label={`Chart of ${e.name}`}
                              >
                                Chart
                              </Link>
                            </td>
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
              );
            })}
          </div>

          <h2>Edge devices</h2>
          <EdgeHealth states={edge} />

          <h2>Recent tickets</h2>
          <RecentTickets siteId={siteId} />
        </section>
      )}
    </Status>
  );
}

function RecentTickets({ siteId }: { siteId: number }) {
  const load = useLoad(
    async (signal) => {
      const end = Date.now() + 60_000;
      const list = await post(
        '/v1/transactions/logs/load',
        {
          siteIds: [siteId],
          start: new Date(end - 30 * DAY).toISOString(),
          end: new Date(end).toISOString(),
        },
        signal,
      );
      return list.sort((a, b) => b.TransactionDate.localeCompare(a.TransactionDate)).slice(0, 8);
    },
    [siteId],
  );
  return (
    <Status load={load} what="the tickets">
      {(tickets) =>
        tickets.length ? (
          <>
            <ul class="tickets">
              {tickets.map((t) => (
                <li key={t.TransactionID}>
                  <Link
                    href={withQuery('/tickets', {
                      site: siteId,
                      ticket: t.TicketNumber,
                      from: toLocalInput(Date.parse(t.TransactionDate), currentZone()).slice(0, 10),
                    })}
                  >
                    Ticket {t.TicketNumber}
                  </Link>{' '}
                  · {formatTime(t.TransactionDate)} · {t.HaulerCompany ?? '—'} ·{' '}
                  {formatNumber(t.Volume)} {t.VolumeUnits ?? ''}
                </li>
              ))}
            </ul>
            <Link
              href={withQuery('/tickets', {
                site: siteId,
                from: toLocalInput(Date.now() - 30 * DAY, currentZone()).slice(0, 10),
              })}
            >
              Tickets of the last 30 days
            </Link>
          </>
        ) : (
          <p class="muted">No tickets in the last 30 days.</p>
        )
      }
    </Status>
  );
}
