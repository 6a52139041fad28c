import { describe, expect, it } from 'vitest';
import { parseTime, toIso } from '../../src/time.js';

describe('parseTime', () => {
  it('reads ISO 8601 date-times, UTC when there is no offset', () => {
    const iso = (s: string) => toIso(parseTime(s)!);
    expect(iso('2026-03-01T06:00:00Z')).toBe('2026-03-01T06:00:00.000Z');
    expect(iso('2026-03-01T06:00:00')).toBe('2026-03-01T06:00:00.000Z');
    expect(iso('2026-03-01T06:00:00.123456+02:00')).toBe('2026-03-01T04:00:00.123Z');
    expect(iso('2026-03-01T06:00-0530')).toBe('2026-03-01T11:30:00.000Z');
    expect(iso('2026-03-01')).toBe('2026-03-01T00:00:00.000Z');
    expect(iso('0050-01-01T00:00:00Z')).toBe('0050-01-01T00:00:00.000Z');
  });

  it('rejects what is not a date-time', () => {
    for (const s of ['', 'yesterday', '2026-02-30T00:00:00Z', '2026-13-01', '2026-03-01T25:00:00Z', '2026-03-01T06:61:00Z', '1772344800000', '2026-03-01T06:00:00+25:00'])
      expect(parseTime(s), s).toBeUndefined();
  });
});
