import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';

const KINDS = ['sensor', 'meter', 'pump', 'tank'] as const;

describe('a job of log entries', () => {
  it('keeps the last entry of each key (kind, equipment, timestamp) in request order, and the newest time', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom(...KINDS),
            fc.integer({ min: 1, max: 4 }),
            fc.integer({ min: 0, max: 12 }).map((m) => m * 60_000),
          ),
          { maxLength: 80 },
        ),
        (keys) => {
          const entries: Entry[] = keys.map(([kind, id, ts], index) => ({
            kind,
            id,
            ts,
            values: [index],
            index,
          }));
          const last = new Map<string, Entry>();
          for (const e of entries) last.set(`${e.kind}:${e.id}:${e.ts}`, e);
          const job = makeJob('log', entries, [1]);
          expect(job.entries).toEqual(
            entries.filter((e) => last.get(`${e.kind}:${e.id}:${e.ts}`) === e),
          );
          expect(job.received).toBe(entries.length);
          expect(job.maxTs).toBe(Math.max(0, ...entries.map((e) => e.ts)));
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 500) },
    );
  });
});
