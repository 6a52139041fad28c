import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUSY_SHARE, deferred, pauseAfter } from '../../src/telemetry/rollups/refresher.js';

describe('rollup refresher pace', () => {
  it('works at most its share of the time while uploads wait, and never stops', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.nat(60_000),
        fc.integer({ min: 1, max: 3_600_000 }),
        (full, took, interval) => {
          const pause = pauseAfter(full, took, interval, true);
          expect(Number.isFinite(pause)).toBe(true);
          expect(pause).toBeGreaterThanOrEqual(full ? 0 : interval);
          if (took > 0) expect(took / (took + pause)).toBeLessThanOrEqual(BUSY_SHARE + 1e-9);
        },
      ),
    );
  });

  it('without waiting uploads: at once after a full batch, else after the interval', () => {
    fc.assert(
      fc.property(fc.nat(60_000), fc.integer({ min: 1, max: 3_600_000 }), (took, interval) => {
        expect(pauseAfter(true, took, interval, false)).toBe(0);
        expect(pauseAfter(false, took, interval, false)).toBe(interval);
      }),
    );
  });

  it('skips cycles only while uploads wait, and only within the grace of their burst', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.option(fc.nat(1_000_000), { nil: undefined }),
        fc.nat(1_000_000),
        fc.nat(120_000),
        (busy, since, elapsed, grace) => {
          const now = (since ?? 0) + elapsed;
          expect(deferred(busy, since, now, grace)).toBe(
            busy && since !== undefined && elapsed < grace,
          );
        },
      ),
    );
  });
});
