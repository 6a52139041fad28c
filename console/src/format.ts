// Times and numbers as people read them.

export type ZoneChoice = 'utc' | 'site' | 'browser';

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The IANA zone a choice means for a site (UTC where the site has none). */
export const zoneOf = (choice: ZoneChoice, siteZone?: string | null) =>
  choice === 'utc' ? 'UTC' : choice === 'site' ? (siteZone ?? 'UTC') : browserZone();

const formats = new Map<string, Intl.DateTimeFormat>();
export function formatTime(iso: string | number | null | undefined, zone?: string): string {
  if (iso === null || iso === undefined) return '—';
  const key = zone ?? '';
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: zone,
    });
    formats.set(key, f);
  }
  return f.format(new Date(iso));
}

const withSeconds = new Map<string, Intl.DateTimeFormat>();
/** A time to the second (a journal's entries follow each other closely). */
export function formatInstant(iso: string | null | undefined, zone?: string): string {
  if (!iso) return '—';
  const key = zone ?? '';
  let f = withSeconds.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      dateStyle: 'medium',
      timeStyle: 'medium',
      timeZone: zone,
    });
    withSeconds.set(key, f);
  }
  return f.format(new Date(iso));
}

/** "3 min ago", "2 h ago", "5 d ago". */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** Silent: nothing heard for more than an hour (or ever). */
export const isSilent = (iso: string | null | undefined, now = Date.now()) =>
  !iso || now - Date.parse(iso) > 3_600_000;

export function formatNumber(v: unknown, digits = 2): string {
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** The value of a datetime-local input for an instant, in the browser's zone. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}
