import { useMemo, useState } from 'preact/hooks';
import { allAlarms, useAlarmStore } from '../alarm-store.js';
import { AlarmTable } from '../alarm-table.js';
import type { Severity } from '../api-schema.js';
import { Status, useLoad } from '../load.js';
import { isSeverity, loadAllSites, loadSiteEquipment, SEVERITIES } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { SiteSelect } from '../site-select.js';

/** The banner's choice: critical and major together. */
const SEVERE = 'critical,major';

/** Active alarms across the client's sites, live from the stream, filtered by site, severity and acknowledgement. */
export function AlarmsPage() {
  const { query } = useRoute();
  const site = Number(query.get('site')) || 0;
  const asked = query.get('severity');
  const severity = isSeverity(asked) || asked === SEVERE ? asked : '';
  const show = query.get('show') === 'unacknowledged' ? 'unacknowledged' : '';
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/alarms', { site, severity, show, ...changes }), { replace: true });
  const [resolved, setResolved] = useState(new Set<string>());
  const store = useAlarmStore();

  const sites = useLoad((signal) => loadAllSites(signal), []);
  const alarms = useMemo(() => {
    const severities = severity ? (severity.split(',') as Severity[]) : SEVERITIES;
    return allAlarms(store).filter(
      (a) =>
        (!site || a.SiteID === site) &&
        severities.includes(a.Severity) &&
        (!show || !a.AcknowledgedAt) &&
        !resolved.has(a.SiteAlarmLogID),
    );
  }, [store, site, severity, show, resolved]);
  // Equipment names from the configuration of the sites with alarms (the first 20 of them; others show ids).
  const withAlarms = [...new Set(alarms.map((a) => a.SiteID))].sort((a, b) => a - b).slice(0, 20);
  const names = useLoad(
    async (signal) => {
      const configs = await Promise.all(
        withAlarms.map((id) => loadSiteEquipment(id, signal).catch(() => undefined)),
      );
      return new Map(
        configs.flatMap(
          (c) => c?.equipment.map((e) => [`${e.kind}:${e.id}`, e.name] as const) ?? [],
        ),
      );
    },
    [withAlarms.join(',')],
  );
  const siteNames = useMemo(
    () => new Map((sites.data ?? []).map((s) => [s.SiteID, s.Name])),
    [sites.data],
  );

  return (
    <section>
      <h1>Alarms</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <SiteSelect
            id="alarm-site"
            value={site}
            sites={sites.data}
            none="All sites"
            onChange={(v) => go({ site: v })}
          />
        </div>
        <div>
          <label for="alarm-severity">Severity</label>
          <select
            id="alarm-severity"
            value={severity}
            onChange={(e) => go({ severity: e.currentTarget.value })}
          >
            <option value="">All severities</option>
            <option value={SEVERE}>critical and major</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="alarm-show">Show</label>
          <select
            id="alarm-show"
            value={show}
            onChange={(e) => go({ show: e.currentTarget.value })}
          >
            <option value="">All active alarms</option>
            <option value="unacknowledged">Unacknowledged only</option>
          </select>
        </div>
      </form>
      <Status load={sites} what="the alarms">
        {() =>
          // Shown once the equipment names are known (an alarm of a site added later shows ids a moment).
          store.ready && names.data ? (
            <>
              <p class="muted" aria-live="polite">
                {alarms.length} {show ? 'unacknowledged' : 'active'} alarm
                {alarms.length === 1 ? '' : 's'}
              </p>
              <AlarmTable
                alarms={alarms}
                names={names.data}
                sites={siteNames}
                onResolved={(a) => setResolved((s) => new Set(s).add(a.SiteAlarmLogID))}
                empty={show ? 'No unacknowledged alarms.' : 'No active alarms.'}
              />
            </>
          ) : (
            <p class="loading" role="status">
              Loading the alarms…
            </p>
          )
        }
      </Status>
    </section>
  );
}
