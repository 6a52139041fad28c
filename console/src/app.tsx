import { useEffect } from 'preact/hooks';
import { Link, useRoute } from './router.js';
import { signOut, useSession } from './session.js';
import { SignIn } from './pages/sign-in.js';
import { SitesPage } from './pages/sites.js';
import { SitePage } from './pages/site.js';
import { ChartsPage } from './pages/charts.js';
import { AlarmsPage } from './pages/alarms.js';
import { TicketsPage } from './pages/tickets.js';
import { ThemeToggle, ZonePicker } from './header-tools.js';
import { useZone } from './zone.js';
import { JournalPage } from './pages/journal.js';
import { AlarmPerformancePage } from './pages/alarm-performance.js';
import { needsAttention, useAlarmFeed, useAlarmStore } from './alarm-store.js';

const NAV = [
  { href: '/', label: 'Sites', match: (p: string) => p === '/' || p.startsWith('/sites') },
  { href: '/alarms', label: 'Alarms', match: (p: string) => p.startsWith('/alarms') },
  { href: '/charts', label: 'Charts', match: (p: string) => p.startsWith('/charts') },
  { href: '/tickets', label: 'Tickets', match: (p: string) => p.startsWith('/tickets') },
];

function page(path: string) {
  const site = /^\/sites\/(\d{1,10})$/.exec(path);
  if (site) return <SitePage siteId={Number(site[1])} />;
  const kpis = /^\/sites\/(\d{1,10})\/alarm-performance$/.exec(path);
  if (kpis) return <AlarmPerformancePage siteId={Number(kpis[1])} />;
  if (path === '/alarms/journal') return <JournalPage />;
  if (path === '/' || path === '/sites') return <SitesPage />;
  if (path === '/alarms') return <AlarmsPage />;
  if (path === '/charts') return <ChartsPage />;
  if (path === '/tickets') return <TicketsPage />;
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link href="/">Go to the sites</Link>.
      </p>
    </section>
  );
}

/** Unacknowledged critical and major alarms, live from the stream, on every page. */
function AlarmBanner() {
  const store = useAlarmStore();
  if (!store.ready) return null;
  let n = 0;
  for (const site of store.sites.values()) n += site.alarms.filter(needsAttention).length;
  return (
    <div class={`banner ${n ? 'alert' : 'calm'}`} role="status" aria-live="polite">
      {n ? (
        <>
          {n} unacknowledged critical or major alarm{n === 1 ? '' : 's'} ·{' '}
          <Link href="/alarms?severity=critical%2Cmajor&show=unacknowledged">Show them</Link>
        </>
      ) : (
        'No unacknowledged critical or major alarms'
      )}
    </div>
  );
}

export function App() {
  const s = useSession();
  const route = useRoute();
  // Every time on the page is shown in the chosen zone: a change of zone draws the page again.
  useZone();
  useAlarmFeed(s?.token);
  // The page's title names where the user is (read by screen readers and shown in tabs and history).
  useEffect(() => {
    const nav = NAV.find((n) => n.match(route.path));
    document.title = `${s ? (nav?.label ?? 'Site') : 'Sign in'} · site-monitor`;
  }, [route.path, s]);

  if (!s) return <SignIn />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">site-monitor</span>
        <nav aria-label="Main">
          {NAV.map((n) => (
            <Link
              key={n.href}
              href={n.href}
              aria-current={n.match(route.path) ? 'page' : undefined}
            >
              {n.label}
            </Link>
          ))}
        </nav>
        <ZonePicker />
        <ThemeToggle />
        <span class="who">{s.clientId}</span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <AlarmBanner />
      <main id="main">{page(route.path)}</main>
    </>
  );
}
