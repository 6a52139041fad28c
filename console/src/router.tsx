import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// Pages are addressed by ordinary URLs under /console/ (the service answers every one of them with
// the page), so any view, filters included, can be bookmarked, shared and reloaded.

export const BASE = '/console';

export interface Route {
  path: string;
  query: URLSearchParams;
}

const read = (): Route => ({
  path: location.pathname.slice(BASE.length).replace(/\/+$/, '') || '/',
  query: new URLSearchParams(location.search),
});

const EVENT = 'console:navigate';

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  const url = BASE + to;
  if (url === location.pathname + location.search) return;
  history[opts.replace ? 'replaceState' : 'pushState'](null, '', url);
  dispatchEvent(new Event(EVENT));
}

/** The query of `to` with the given keys set (empty values dropped). */
export function withQuery(
  path: string,
  values: Record<string, string | number | boolean | undefined | null>,
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    addEventListener('popstate', update);
    addEventListener(EVENT, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(EVENT, update);
    };
  }, []);
  return route;
}

type AnchorProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & {
  href: string;
  children: ComponentChildren;
};

/** A link inside the console: a real href (open in a new tab works), followed without reloading. */
export function Link({ href, children, ...rest }: AnchorProps) {
  return (
    <a
      {...rest}
      href={BASE + href}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
        scrollTo(0, 0);
      }}
    >
      {children}
    </a>
  );
}
