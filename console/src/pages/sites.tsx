import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { ago, formatTime, isSilent } from '../format.js';
import { Status, useLoad } from '../load.js';
import { Link, navigate, useRoute, withQuery } from '../router.js';
import { SiteMap } from '../site-map.js';
import { useSiteStates } from '../site-states.js';

const PER_PAGE = 20;
const MAX_PER_PAGE = 100;

/** Sites: search by name, active or not, paging; alarm counts and how long each has been silent. */
export function SitesPage() {
  const { query } = useRoute();
  const name = query.get('name') ?? '';
  const active = query.get('active') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, Number(query.get('perPage')) || PER_PAGE));
  const [typed, setTyped] = useState(name);
  const go = (changes: Record<string, string | number>, replace = false) =>
    navigate(
      withQuery('/', {
        name,
        active,
        page: page > 1 ? page : '',
        perPage: perPage === PER_PAGE ? '' : perPage,
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
  const states = useSiteStates(load.data?.data.map((s) => s.SiteID) ?? []);

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
              <SiteMap
                sites={p.data.map((s) => ({
                  id: s.SiteID,
                  name: s.Name,
                  lat: s.Latitude,
                  lng: s.Longitude,
                  state: states?.get(s.SiteID) ?? 'normal',
                }))}
              />
            )}
            {p.data.length > 0 && (
              <div class="scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Site</th>
                      <th scope="col">Company</th>
                      <th scope="col">Status</th>
                      <th scope="col">Active alarms</th>
                      <th scope="col">Last communication</th>
                    </tr>
                  </thead>
                  <tbody>
                    {p.data.map((s) => (
                      <tr key={s.SiteID}>
                        <td>
                          <Link href={`/sites/${s.SiteID}`}>{s.Name}</Link>
                        </td>
                        <td>{s.CompanyName}</td>
                        <td>{s.Active ? 'Active' : <span class="muted">Inactive</span>}</td>
                        <td>
                          {s.ActiveAlarmCount ? (
                            <span class="badge bad">{s.ActiveAlarmCount}</span>
                          ) : (
                            '0'
                          )}
                        </td>
                        <td>
                          {isSilent(s.LastCommunication) && <span class="badge warn">Silent</span>}{' '}
                          <span title={formatTime(s.LastCommunication)}>
                            {ago(s.LastCommunication)}
                          </span>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
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
