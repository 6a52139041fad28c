import { currentZone } from './zone.js';

// Times and numbers as people read them; times in the zone the person chose (zone.ts) unless told.

export type ZoneChoice = 'utc' | 'site' | 'browser';

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The IANA zone a choice means for a site (UTC where the site has none). */
export const zoneOf = (choice: ZoneChoice, siteZone?: string | null) =>
  choice === 'utc' ? 'UTC' : choice === 'site' ? (siteZone ?? 'UTC') : browserZone();

const formats = new Map<string, Intl.DateTimeFormat>();
export function formatTime(iso: string | number | null | undefined, zone?: string): string {
  if (iso === null || iso === undefined) return '—';
  const key = zone ?? currentZone();
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: key,
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

/** The offset (ms) of a zone's clock from UTC at an instant. */
function offsetOf(ms: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const clock = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return clock - Math.floor(ms / 1000) * 1000;
}

/** The value of a datetime-local input for an instant: its wall-clock time in `zone`. */
export function toLocalInput(ms: number, zone: string): string {
  return new Date(ms + offsetOf(ms, zone)).toISOString().slice(0, 16);
}

/**
 * The instant a wall-clock time ("2026-03-08T02:30", a datetime-local value, or a day with T00:00)
 * means in `zone`; NaN when unreadable. A repeated time (clocks going back) is its first occurrence;
 * a skipped one (clocks going forward) is read with the offset before the change.
 */
export function fromLocalInput(value: string, zone: string): number {
  const wall = Date.parse(`${value}Z`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) || Number.isNaN(wall)) return NaN;
  const candidates = [-86_400_000, 0, 86_400_000].map((d) => wall - offsetOf(wall + d, zone));
  const exact = candidates.filter((c) => toLocalInput(c, zone) === value.slice(0, 16));
  // In a gap (a time the clock skipped), the offset before the change applies.
  return exact.length ? Math.min(...exact) : candidates[0];
}
