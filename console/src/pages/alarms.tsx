import { useMemo, useState } from 'preact/hooks';
import { allAlarms, useAlarmEvents, useAlarmStore } from '../alarm-store.js';
import { AlarmTable, type AnyAlarm } from '../alarm-table.js';
import { post } from '../api.js';
import type { Severity } from '../api-schema.js';
import { can, useMe } from '../me.js';
import { Status, useLoad } from '../load.js';
import { isSeverity, loadAllSites, loadSiteEquipment, SEVERITIES } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { SiteSelect } from '../site-select.js';

/** The banner's choice: critical and major together. */
const SEVERE = 'critical,major';
const DAY = 86_400_000;
/** How far back the alarms resolved without acknowledgement are listed. */
const RESOLVED_DAYS = 7;

/** Active alarms across the client's sites, live from the stream, filtered by site, severity and acknowledgement. */
export function AlarmsPage() {
  const { query } = useRoute();
  const site = Number(query.get('site')) || 0;
  const asked = query.get('severity');
  const severity = isSeverity(asked) || asked === SEVERE ? asked : '';
  const shown = query.get('show');
  const show = shown === 'unacknowledged' || shown === 'resolved' ? shown : '';
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/alarms', { site, severity, show, ...changes }), { replace: true });
  const [resolved, setResolved] = useState(new Set<string>());
  const store = useAlarmStore();
  const me = useMe();
  const severities = severity ? (severity.split(',') as Severity[]) : SEVERITIES;

  const sites = useLoad((signal) => loadAllSites(signal), []);
  const alarms = useMemo(() => {
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
      // Nothing to name before the stream's snapshot has said which alarms there are.
      if (!store.ready) return null;
      const configs = await Promise.all(
        withAlarms.map((id) => loadSiteEquipment(id, signal).catch(() => undefined)),
      );
      return new Map(
        configs.flatMap(
          (c) => c?.equipment.map((e) => [`${e.kind}:${e.id}`, e.name] as const) ?? [],
        ),
      );
    },
    [store.ready, withAlarms.join(',')],
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
            {can(me, 'read') && (
              <option value="resolved">Resolved, not acknowledged ({RESOLVED_DAYS} days)</option>
            )}
          </select>
        </div>
      </form>
      <Status load={sites} what="the alarms">
        {(all) => {
          if (show === 'resolved')
            return (
              <ResolvedUnacknowledged
                siteIds={site ? [site] : all.map((s) => s.SiteID)}
                severities={severities}
                siteNames={siteNames}
              />
            );
          // Shown once the equipment names are known (an alarm of a site added later shows ids a moment).
          if (!store.ready || !names.data)
            return (
              <p class="loading" role="status">
                Loading the alarms…
              </p>
            );
          return (
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
          );
        }}
      </Status>
    </section>
  );
}

/**
 * Alarms that returned to normal (resolved) while nobody acknowledged them, over the last days
 * (POST /v1/alarms/list, state unacknowledged): ISA-18.2 keeps them before a person until acknowledged.
 */
function ResolvedUnacknowledged(props: {
  siteIds: number[];
  severities: Severity[];
  siteNames: Map<number, string>;
}) {
  const load = useLoad(
    async (signal) => {
      if (!props.siteIds.length) return { alarms: [], names: new Map<string, string>() };
      const end = Date.now() + 60_000;
      const list = await post(
        '/v1/alarms/list',
        {
          siteIds: props.siteIds,
          start: new Date(end - RESOLVED_DAYS * DAY).toISOString(),
          end: new Date(end).toISOString(),
          state: 'unacknowledged',
          page: 1,
          perPage: 500,
        },
        signal,
      );
      const alarms = list.data.filter((a) => a.ResolvedAt) as AnyAlarm[];
      const configs = await Promise.all(
        [...new Set(alarms.map((a) => a.SiteID))]
          .slice(0, 20)
          .map((id) => loadSiteEquipment(id, signal).catch(() => undefined)),
      );
      const names = new Map(
        configs.flatMap(
          (c) => c?.equipment.map((e) => [`${e.kind}:${e.id}`, e.name] as const) ?? [],
        ),
      );
      return { alarms, names };
    },
    [props.siteIds.join(',')],
  );
  // A resolve or an acknowledgement anywhere changes this list.
  useAlarmEvents((e) => {
    if (e.status === 'resolved' || e.status === 'acknowledged') load.reload();
  }, []);
  const shown = (load.data?.alarms ?? []).filter((a) => props.severities.includes(a.Severity));
  return (
    <>
      <p class="muted" aria-live="polite">
        {shown.length} resolved alarm{shown.length === 1 ? '' : 's'} not acknowledged: alarms of the
        last {RESOLVED_DAYS} days that returned to normal before anyone acknowledged them (the 500
        newest at most).
      </p>
      <Status load={load} what="the resolved alarms">
        {() => (
          <AlarmTable
            alarms={shown}
            names={load.data?.names}
            sites={props.siteNames}
            onResolved={load.reload}
            onChanged={load.reload}
            empty="None."
          />
        )}
      </Status>
    </>
  );
}
