import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime, parseTime, toIso } from '../../src/time.js';

describe('parseTime', () => {
  it('reads ISO 8601 date-times, UTC when there is no offset', () => {
    const iso = (s: string) => toIso(parseTime(s)!);
    expect(iso('2026-03-01T06:00:00Z')).toBe('2026-03-01T06:00:00.000Z');
    expect(iso('2026-03-01T06:00:00')).toBe('2026-03-01T06:00:00.000Z');
    expect(iso('2026-03-01T06:00:00.123456+02:00')).toBe('2026-03-01T04:00:00.123Z');
    expect(iso('2026-03-01T06:00-0530')).toBe('2026-03-01T11:30:00.000Z');
    expect(iso('2026-03-01 06:00')).toBe('2026-03-01T06:00:00.000Z');
    expect(iso('2026-02-28T23:59:59.999Z')).toBe('2026-02-28T23:59:59.999Z');
    expect(iso('0050-01-01T00:00:00Z')).toBe('0050-01-01T00:00:00.000Z');
  });

  it('rejects what is not a date-time', () => {
    for (const s of [
      '',
      'yesterday',
      '2026-02-30T00:00:00Z',
      '2026-13-01',
      '2026-03-01T25:00:00Z',
      '2026-03-01T06:61:00Z',
      '1772344800000',
      '2026-03-01T06:00:00+25:00',
    ])
      expect(parseTime(s), s).toBeUndefined();
  });

  it('rejects what does not name one instant: a date alone, hour 24, second 60, a day the month lacks', () => {
    for (const s of [
      '2026-03-01',
      '2026-03-01Z',
      '2026-11-10T24:00:00Z',
      '2026-11-10T24:59:60Z',
      '2026-11-10T23:59:60Z',
      '2026-12-31T23:59:60.999+00:00',
      '2026-02-29T00:00:00Z',
      '2024-02-30T12:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-03-01T06',
    ])
      expect(parseTime(s), s).toBeUndefined();
    expect(parseTime('2024-02-29T12:00:00Z')).toBe(Date.UTC(2024, 1, 29, 12));
  });
});

describe('isoTime', () => {
  const MAX = 8.64e15; // the range of a Date
  it('writes what toISOString writes, for every time a Date holds', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -MAX, max: MAX }),
          // Around the ends of years 0 and 9999 (written +/-YYYYYY outside them) and of days.
          fc.integer({ min: -62_198_755_200_000, max: -62_104_060_800_000 }),
          fc.integer({ min: 253_370_764_800_000, max: 253_433_923_200_000 }),
          fc
            .integer({ min: -10 * 86_400_000, max: 10 * 86_400_000 })
            .map((d) => d - (d % 1000) - 1),
          fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        ),
        (t) => {
          expect(isoTime(t)).toBe(new Date(t).toISOString());
          expect(toIso(new Date(t))).toBe(new Date(t).toISOString()); // toIso writes Dates with it
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 2000) },
    );
  });

  it('throws for what is not a time, as toISOString does', () => {
    for (const t of [NaN, Infinity, MAX + 1, -MAX - 1])
      expect(() => isoTime(t)).toThrow(RangeError);
  });
});

describe('parseTime of the form gateways send', () => {
  it('reads every time of years 0000-9999 written as toISOString writes it, or without the fraction, as the general form says', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
        fc.boolean(),
        (t, whole) => {
          const time = whole ? t - (((t % 1000) + 1000) % 1000) : t;
          const text = new Date(time).toISOString();
          const written = whole ? text.replace(/\.\d{3}Z$/, 'Z') : text;
          expect(parseTime(written)).toBe(time);
          // The same instant in a form only the general reading takes.
          expect(parseTime(written.replace(/Z$/, '+00:00'))).toBe(time);
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 2000) },
    );
  });

  it('refuses in that form what the general reading refuses', () => {
    for (const s of [
      '2026-02-30T00:00:00Z',
      '2026-02-29T00:00:00.000Z',
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-03-00T00:00:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T23:60:00Z',
      '2026-03-01T23:59:60Z',
      '2026-03-01T23:59:59.99xZ',
      '2026-03-01T23:59:59,999Z',
      '2026-0a-01T00:00:00Z',
      '+02026-03-01T00:00:00Z',
    ])
      expect(parseTime(s), s).toBeUndefined();
    expect(parseTime('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
  });
});
