import { useMemo, useState } from 'preact/hooks';
import { post } from '../api.js';
import { AlarmTable } from '../alarm-table.js';
import { Status, useLoad } from '../load.js';
import { isSeverity, loadAllSites, loadSiteEquipment, SEVERITIES } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { SiteSelect } from '../site-select.js';

/** Active alarms across the client's sites, filtered by site and severity, each resolvable. */
export function AlarmsPage() {
  const { query } = useRoute();
  const site = Number(query.get('site')) || 0;
  const asked = query.get('severity');
  const severity = isSeverity(asked) ? asked : '';
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/alarms', { site, severity, ...changes }), { replace: true });
  const [resolved, setResolved] = useState(new Set<string>());

  const load = useLoad(
    async (signal) => {
      const sites = await loadAllSites(signal);
      const ids = site ? [site] : sites.map((s) => s.SiteID);
      const alarms = ids.length
        ? await post(
            '/v1/edge/alarms/active',
            { siteIds: ids, ...(severity ? { severities: [severity] } : {}) },
            signal,
          )
        : [];
      // Equipment names from the configuration of the sites with alarms (the first 20 of them; others show ids).
      const withAlarms = [...new Set(alarms.map((a) => a.SiteID))].slice(0, 20);
      const configs = await Promise.all(
        withAlarms.map((id) => loadSiteEquipment(id, signal).catch(() => undefined)),
      );
      const names = new Map(
        configs.flatMap(
          (c) => c?.equipment.map((e) => [`${e.kind}:${e.id}`, e.name] as const) ?? [],
        ),
      );
      return { sites, alarms, names };
    },
    [site, severity],
  );
  const siteNames = useMemo(
    () => new Map((load.data?.sites ?? []).map((s) => [s.SiteID, s.Name])),
    [load.data],
  );

  return (
    <section>
      <h1>Alarms</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <SiteSelect
            id="alarm-site"
            value={site}
            sites={load.data?.sites}
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
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={load.reload}>
          Refresh
        </button>
      </form>
      <Status load={load} what="the alarms">
        {({ alarms, names }) => {
          const open = alarms.filter((a) => !resolved.has(a.SiteAlarmLogID));
          return (
            <>
              <p class="muted" aria-live="polite">
                {open.length} active alarm{open.length === 1 ? '' : 's'}
              </p>
              <AlarmTable
                alarms={open}
                names={names}
                sites={siteNames}
                onResolved={(a) => setResolved((s) => new Set(s).add(a.SiteAlarmLogID))}
              />
            </>
          );
        }}
      </Status>
    </section>
  );
}
