import type { Queryable } from '../../db/index.js';

// Time zones of the summary downloads: IANA names, checked by both clocks that use them (the
// service's, to choose rollup levels, and the database's, which cuts the buckets).

const NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,3}$/;
const formatters = new Map<string, Intl.DateTimeFormat>();
const knownToDatabase = new Set<string>();

function formatter(zone: string): Intl.DateTimeFormat | undefined {
  let known = formatters.get(zone);
  if (known) return known;
  try {
    known = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  } catch {
    return undefined;
  }
  if (formatters.size > 1000) formatters.clear();
  formatters.set(zone, known);
  return known;
}

/**
 * An IANA zone name both Node and the database know. Offsets such as "+03:00" are refused: the
 * database reads them as POSIX zones, whose sign is the opposite.
 */
export async function isKnownZone(db: Queryable, zone: string): Promise<boolean> {
  if (zone.length > 64 || !NAME.test(zone) || !formatter(zone)) return false;
  if (knownToDatabase.has(zone)) return true;
  try {
    await db.query(`SELECT now() AT TIME ZONE $1::text`, [zone]);
  } catch {
    return false;
  }
  if (knownToDatabase.size > 1000) knownToDatabase.clear();
  knownToDatabase.add(zone);
  return true;
}

/** Offset from UTC in minutes at an instant (epoch ms). */
export function offsetMinutes(zone: string, time: number): number {
  const name =
    formatter(zone)!
      .formatToParts(time)
      .find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  const offset = /GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?/.exec(name);
  if (!offset) return 0;
  const [, sign, hours, minutes, seconds] = offset;
  return (
    (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes) + Number(seconds ?? 0) / 60)
  );
}

/**
 * How the zone's clock lines up with UTC over [start, end): 'utc' when its offset stays 0, 'hour'
 * when it stays a whole number of hours, 'quarter' when quarters of hours, 'none' otherwise (local
 * mean time before time zones: offsets such as +00:19:32). Sampled every 6 days and at both
 * ends: an offset that lasts less than that is no zone's rule (daylight saving lasts months).
 */
export function zoneAlignment(
  zone: string,
  start: number,
  end: number,
): 'utc' | 'hour' | 'quarter' | 'none' {
  let utc = true;
  let hour = true;
  const step = 6 * 86_400_000;
  for (let time = start; ; time = Math.min(time + step, end)) {
    const offset = offsetMinutes(zone, time);
    if (offset % 15 !== 0) return 'none';
    if (offset % 60 !== 0) hour = false;
    if (offset !== 0) utc = false;
    if (time >= end) break;
  }
  return utc ? 'utc' : hour ? 'hour' : 'quarter';
}
