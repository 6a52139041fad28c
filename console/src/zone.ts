import { useEffect, useState } from 'preact/hooks';
import { browserZone, type ZoneChoice } from './format.js';

// The one time zone of every time the console shows or reads: the person's choice (the site's zone,
// the browser's or UTC), kept in localStorage, and the site the page is about (the site page's, the
// charts' while every series is of one site, the tickets' filter). "Site" with no single site in
// view falls back to UTC, and the header says so.

const KEY = 'site-monitor.zone';
const CHOICES: ZoneChoice[] = ['site', 'browser', 'utc'];
export const isZoneChoice = (s: string | null | undefined): s is ZoneChoice =>
  CHOICES.includes(s as ZoneChoice);

const stored = () => {
  try {
    const v = localStorage.getItem(KEY);
    return isZoneChoice(v) ? v : 'site';
  } catch {
    return 'site';
  }
};

interface ZoneState {
  choice: ZoneChoice;
  /** The zone of the one site the page shows (UTC for a site without one); undefined: no single site. */
  siteZone: string | undefined;
}
let state: ZoneState = { choice: stored(), siteZone: undefined };
const listeners = new Set<() => void>();
const set = (next: Partial<ZoneState>) => {
  if (Object.entries(next).every(([k, v]) => state[k as keyof ZoneState] === v)) return;
  state = { ...state, ...next };
  listeners.forEach((l) => l());
};

/** The person's choice, remembered in this browser. */
export function chooseZone(choice: ZoneChoice) {
  try {
    localStorage.setItem(KEY, choice);
  } catch {
    // Private modes may refuse storage: the choice then lasts until the page is closed.
  }
  set({ choice });
}

/** The IANA zone of a state: the site's needs a single site in view (else UTC). */
const resolve = (s: ZoneState) =>
  s.choice === 'utc' ? 'UTC' : s.choice === 'browser' ? browserZone() : (s.siteZone ?? 'UTC');

/** The zone every time is shown in now (format.ts's default). */
export const currentZone = () => resolve(state);

export interface Zone extends ZoneState {
  /** The IANA zone times are shown and read in. */
  zone: string;
  /** "Site" was chosen but the page shows no single site: UTC stands in. */
  fallback: boolean;
}

/** The zone as it stands, re-rendering the component when it changes. */
export function useZone(): Zone {
  const [s, setS] = useState(state);
  useEffect(() => {
    const update = () => setS(state);
    listeners.add(update);
    update();
    return () => void listeners.delete(update);
  }, []);
  return { ...s, zone: resolve(s), fallback: s.choice === 'site' && s.siteZone === undefined };
}

/**
 * Names the one site the page is about while it is shown (its zone, null for a site without one:
 * UTC); undefined (or unmounting) says there is none.
 */
export function useSiteZone(zone: string | null | undefined) {
  const value = zone === null ? 'UTC' : zone;
  useEffect(() => {
    set({ siteZone: value });
    return () => set({ siteZone: undefined });
  }, [value]);
}
