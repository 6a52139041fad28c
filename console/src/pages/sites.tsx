import { useEffect, useMemo, useState } from 'preact/hooks';
import { get } from '../api.js';
import type { Site } from '../api-schema.js';
import { commLoss, worstState, useAlarmStore, type SiteLive } from '../alarm-store.js';
import { ago, formatTime, isSilent } from '../format.js';
import { Status, useLoad } from '../load.js';
import { Link, navigate, useRoute, withQuery } from '../router.js';
import { SiteMap } from '../site-map.js';
import { WORST_STATES } from '../worst-state.js';

const PER_PAGE = 20;
const MAX_PER_PAGE = 100;

/** A loaded site as the list shows it: live alarms and last communication when the stream has them. */
interface Row {
  site: Site;
  live: SiteLive | undefined;
  state: ReturnType<typeof worstState>;
  alarms: number;
  unacknowledged: number;
  lastCommunication: string | null;
  commLoss: boolean;
}

const text = (a: string | null | undefined, b: string | null | undefined) =>
  (a ?? '').localeCompare(b ?? '', undefined, { sensitivity: 'base', numeric: true });
const byName = (a: Row, b: Row) => text(a.site.Name, b.site.Name) || a.site.SiteID - b.site.SiteID;
/** Never heard from: the oldest of all. */
const time = (iso: string | null) => (iso ? Date.parse(iso) : -Infinity);

/** The columns the list sorts by, each in its ascending order (worst first for the state). */
const COLUMNS = {
  name: { label: 'Site', compare: byName },
  company: {
    label: 'Company',
    compare: (a: Row, b: Row) => text(a.site.CompanyName, b.site.CompanyName),
  },
  status: {
    label: 'Status',
    compare: (a: Row, b: Row) => Number(b.site.Active) - Number(a.site.Active),
  },
  alarms: { label: 'Active alarms', compare: (a: Row, b: Row) => a.alarms - b.alarms },
  lastcomm: {
    label: 'Last communication',
    compare: (a: Row, b: Row) => time(a.lastCommunication) - time(b.lastCommunication),
  },
  state: {
    label: 'State',
    // Worst first: the overview's ranking, then unacknowledged alarms, then alarm count.
    compare: (a: Row, b: Row) =>
      a.state.rank - b.state.rank || b.unacknowledged - a.unacknowledged || b.alarms - a.alarms,
  },
} satisfies Record<string, { label: string; compare: (a: Row, b: Row) => number }>;
type Column = keyof typeof COLUMNS;
const isColumn = (c: string | null): c is Column =>
  !!c && Object.prototype.hasOwnProperty.call(COLUMNS, c);

/**
 * Sites: search by name, active or not, paging; each loaded site's worst state, alarm counts,
 * communication loss and last communication, live from the stream; sorted by any column or worst first.
 */
export function SitesPage() {
  const { query } = useRoute();
  const name = query.get('name') ?? '';
  const active = query.get('active') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, Number(query.get('perPage')) || PER_PAGE));
  const asked = query.get('sort');
  const sort: Column = isColumn(asked) ? asked : 'name';
  const descending = query.get('dir') === 'desc';
  const [typed, setTyped] = useState(name);
  const go = (changes: Record<string, string | number>, replace = false) =>
    navigate(
      withQuery('/', {
        name,
        active,
        page: page > 1 ? page : '',
        perPage: perPage === PER_PAGE ? '' : perPage,
        sort: sort === 'name' ? '' : sort,
        dir: descending ? 'desc' : '',
        ...changes,
      }),
      { replace },
    );

  // The search follows typing after a short pause; the address keeps it (a bookmark finds it again).
  useEffect(() => {
    if (typed === name) return;
    const t = setTimeout(() => go({ name: typed, page: '' }, true), 300);
    return () => clearTimeout(t);
  }, [typed]);

  const load = useLoad(
    (signal) =>
      get(
        '/v1/sites',
        {
          page,
          perPage,
          dataType: 'additional',
          sortBy: 'name',
          name: name || undefined,
          active: active === 'true' ? true : active === 'false' ? false : undefined,
        },
        signal,
      ),
    [name, active, page, perPage],
  );

  useEffect(() => {
    if (load.data) performance.mark('console:sites-ready');
  }, [load.data]);

  // The sites loaded, with what the stream says of them now, in the chosen order.
  const store = useAlarmStore();
  const rows = useMemo(() => {
    const list: Row[] = (load.data?.data ?? []).map((site) => {
      const live = store.ready ? store.sites.get(site.SiteID) : undefined;
      const alarms = live?.alarms;
      return {
        site,
        live,
        state: worstState(live),
        alarms: alarms ? alarms.length : (site.ActiveAlarmCount ?? 0),
        unacknowledged: alarms?.filter((a) => !a.AcknowledgedAt).length ?? 0,
        lastCommunication:
          live?.lastCommunication &&
          (!site.LastCommunication || live.lastCommunication > site.LastCommunication)
            ? live.lastCommunication
            : (site.LastCommunication ?? null),
        commLoss: !!commLoss(live),
      };
    });
    const compare = COLUMNS[sort].compare;
    return list.sort((a, b) => (descending ? -1 : 1) * compare(a, b) || byName(a, b));
  }, [load.data, store, sort, descending]);
  const sortBy = (c: Column) =>
    go({ sort: c === 'name' ? '' : c, dir: c === sort && !descending ? 'desc' : '' }, true);

  return (
    <section>
      <h1>Sites</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for="site-search">Search by name</label>
          <input
            id="site-search"
            type="search"
            maxLength={200}
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="site-active">Status</label>
          <select
            id="site-active"
            value={active}
            onChange={(e) => go({ active: e.currentTarget.value, page: '' })}
          >
            <option value="">All sites</option>
            <option value="true">Active</option>
            <option value="false">Inactive</option>
          </select>
        </div>
      </form>
      <Status load={load} what="the sites">
        {(p) => (
          <>
            <p class="muted" aria-live="polite">
              {p.total} site{p.total === 1 ? '' : 's'}
              {name && ` matching “${name}”`}
              {load.loading && ' (updating…)'}
            </p>
            {p.data.length > 0 && (
              <>
                <SiteMap
                  sites={rows.map((r) => ({
                    id: r.site.SiteID,
                    name: r.site.Name,
                    lat: r.site.Latitude,
                    lng: r.site.Longitude,
                    state: store.ready ? WORST_STATES[r.state.rank - 1] : 'normal',
                  }))}
                />
                <div class="actions">
                  <button
                    type="button"
                    aria-pressed={sort === 'state' && !descending}
                    onClick={() => go({ sort: 'state', dir: '' }, true)}
                  >
                    Worst first
                  </button>
                </div>
                <div class="scroll">
                  <table class="sites">
                    <thead>
                      <tr>
                        {(Object.keys(COLUMNS) as Column[]).map((c) => (
                          <th
                            scope="col"
                            key={c}
                            aria-sort={
                              c === sort ? (descending ? 'descending' : 'ascending') : undefined
                            }
                          >
                            <button type="button" class="sort" onClick={() => sortBy(c)}>
                              {COLUMNS[c].label}
                              <span aria-hidden="true">
                                {c === sort ? (descending ? ' ▼' : ' ▲') : ''}
                              </span>
                            </button>
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((r) => (
                        <tr key={r.site.SiteID} data-state={r.state.rank}>
                          <td>
                            <Link href={`/sites/${r.site.SiteID}`}>{r.site.Name}</Link>
                          </td>
                          <td>{r.site.CompanyName}</td>
                          <td>{r.site.Active ? 'Active' : <span class="muted">Inactive</span>}</td>
                          <td>{r.alarms ? <span class="badge bad">{r.alarms}</span> : '0'}</td>
                          <td>
                            {r.commLoss && <span class="badge bad">Communication lost</span>}{' '}
                            {isSilent(r.lastCommunication) && (
                              <span class="badge warn">Silent</span>
                            )}{' '}
                            <span title={formatTime(r.lastCommunication)}>
                              {ago(r.lastCommunication)}
                            </span>
                          </td>
                          <td>
                            {!store.ready ? (
                              <span class="muted">…</span>
                            ) : (
                              <>
                                <span class={`state state-${r.state.rank}`}>{r.state.label}</span>
                                {r.unacknowledged > 0 && (
                                  <span class="muted"> ({r.unacknowledged} unacknowledged)</span>
                                )}
                              </>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </>
            )}
            <nav class="pager" aria-label="Pages">
              <button type="button" disabled={page <= 1} onClick={() => go({ page: page - 1 })}>
                Previous
              </button>
              <span>
                Page {p.page} of {Math.max(1, p.totalPages)}
              </span>
              <button
                type="button"
                disabled={page >= p.totalPages}
                onClick={() => go({ page: page + 1 })}
              >
                Next
              </button>
            </nav>
          </>
        )}
      </Status>
    </section>
  );
}
