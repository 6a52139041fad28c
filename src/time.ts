// Times in: any ISO 8601 date-time, UTC when it has no offset. Times out: UTC with milliseconds and Z.
//
// A date-time names one instant, written one way: a date alone (which instant of the day?), hour 24
// (24:59 would alias 00:59 of the next day, and 24:00 is midnight written twice) and second 60 (a
// leap second PostgreSQL cannot store; it would become :59 and alias a real second) are refused
// rather than read as something else. Calendar dates must exist (no February 30).
import { badRequest, invalidField } from './errors.js';

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Day starts (ms) of the dates "YYYY-MM-DD" canonicalTime has read lately, or NaN for no such day. */
const dayStarts = new Map<string, number>();
const digit = (text: string, i: number) => {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : NaN;
};
const two = (text: string, i: number) => digit(text, i) * 10 + digit(text, i + 1);

/**
 * The form gateways send, "YYYY-MM-DDTHH:MM:SS.fffZ" or without the fraction, read without the
 * regular expression (2 µs a time, most of it): the date's start is kept per date text. undefined
 * for any other text, which parseTime then reads the long way.
 */
function canonicalTime(text: string): number | undefined {
  const n = text.length;
  if (n !== 20 && n !== 24) return undefined;
  if (text[10] !== 'T' || text[13] !== ':' || text[16] !== ':' || text[n - 1] !== 'Z')
    return undefined;
  const H = two(text, 11);
  const I = two(text, 14);
  const S = two(text, 17);
  let ms = 0;
  if (n === 24) {
    if (text[19] !== '.') return undefined;
    ms = digit(text, 20) * 100 + two(text, 21);
  }
  if (!(H <= 23 && I <= 59 && S <= 59 && ms >= 0)) return undefined; // NaN fails too
  const date = text.slice(0, 10);
  let day = dayStarts.get(date);
  if (day === undefined) {
    day = /^\d{4}-\d{2}-\d{2}$/.test(date) ? (parseIso(`${date}T00:00:00Z`) ?? NaN) : NaN;
    if (dayStarts.size >= 4096) dayStarts.clear();
    dayStarts.set(date, day);
  }
  if (Number.isNaN(day)) return undefined;
  return day + ((H * 60 + I) * 60 + S) * 1000 + ms;
}

/** Milliseconds since the epoch, or undefined when the text is not an ISO 8601 date-time. */
export function parseTime(text: string): number | undefined {
  return canonicalTime(text) ?? parseIso(text);
}

function parseIso(text: string): number | undefined {
  const m = ISO.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '00', frac = '', zone] = m;
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
    if (Number(digits.slice(0, 2)) > 23 || Number(digits.slice(2) || 0) > 59) return undefined;
  }
  const [Y, M, D, H, I, S] = [y, mo, d, h, mi, s].map(Number);
  if (M < 1 || M > 12 || D < 1 || H > 23 || I > 59 || S > 59) return undefined;
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const day = new Date(0);
  day.setUTCFullYear(Y, M - 1, D);
  // Reject dates that roll over (2026-02-30) by reading the day back.
  if (day.getUTCDate() !== D) return undefined;
  return day.getTime() + ((H * 60 + I) * 60 + S) * 1000 + ms - offsetMin * 60_000;
}

/** A time as the service writes it (UTC, milliseconds, Z); isoTime for a Date or a number. */
export const toIso = (t: Date | number | string | null | undefined): string | null =>
  t === null || t === undefined
    ? null
    : typeof t === 'string'
      ? new Date(t).toISOString()
      : isoTime(typeof t === 'number' ? t : t.getTime());

const DAY_MS = 86_400_000;

const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** The last few days' "YYYY-MM-DDT" (by day number), as toISOString writes them (any year). */
const dayTexts = new Map<number, string>();

/**
 * `new Date(t).toISOString()`, several times faster where many times fall on few days (the records
 * of a download): toISOString took 1.6 µs a call, most of the service's own time for plot values. The
 * day's text comes from toISOString once per day, the time of day is written here.
 */
export function isoTime(time: number): string {
  const t = Math.trunc(time); // as Date does
  if (!(Math.abs(t) <= 8.64e15)) throw new RangeError('Invalid time value'); // as toISOString
  const day = Math.floor(t / DAY_MS);
  let prefix = dayTexts.get(day);
  if (prefix === undefined) {
    const full = new Date(t).toISOString();
    prefix = full.slice(0, full.indexOf('T') + 1);
    if (dayTexts.size >= 4096) dayTexts.clear();
    dayTexts.set(day, prefix);
  }
  const ms = t - day * DAY_MS;
  const s = Math.floor(ms / 1000);
  return `${prefix}${TWO[Math.floor(s / 3600)]}:${TWO[Math.floor(s / 60) % 60]}:${TWO[s % 60]}.${THREE[ms % 1000]}Z`;
}

/**
 * The time of a record an edge device sends (an upload, an alarm), in ms: ISO 8601, at most 24 h
 * ahead of `now` (the request's arrival), not before 1970 (that is a device's unset clock, not
 * telemetry). Throws a 400 naming `path` otherwise.
 */
export function parseEdgeTime(text: string, path: string, now: number): number {
  const t = parseTime(text);
  if (t === undefined) throw invalidField(path, 'is not an ISO 8601 date-time');
  if (t > now + DAY_MS) throw invalidField(path, 'is more than 24 h in the future');
  if (t < 0) throw invalidField(path, 'is before 1970-01-01T00:00:00Z');
  return t;
}

/** What every time field says when parseTime refuses it. */
export const NOT_A_TIME =
  'must be an ISO 8601 date-time with a time of day (hours 00-23, seconds 00-59, a real calendar date)';

/**
 * A request's `[start, end)` range in ms, checked as every range input is: both ISO 8601, end after
 * start, at most maxDays long. Throws HttpError 400 naming the field.
 */
export function parseRange(
  start: string,
  end: string,
  maxDays: number,
): { start: number; end: number } {
  const bad = (path: string, message: string) =>
    badRequest(`${path.slice(1)} ${message}`, [{ path, message }]);
  const from = parseTime(start);
  if (from === undefined) throw bad('/start', NOT_A_TIME);
  const to = parseTime(end);
  if (to === undefined) throw bad('/end', NOT_A_TIME);
  if (to <= from) throw bad('/end', 'must be after start');
  if (to - from > maxDays * DAY_MS)
    throw bad('/end', `must be at most ${maxDays} days after start`);
  return { start: from, end: to };
}
/** SQL of a timestamptz column as the outputs write it (UTC, milliseconds, Z), for JSON built in SQL. */
export const isoSql = (col: string) =>
  `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
