import { afterEach, describe, expect, it, vi } from 'vitest';
import { targetHorizon } from '../../src/telemetry/retention/horizon.js';
import type { RetentionReport } from '../../src/telemetry/retention/pass.js';
import { describeRetention } from '../../src/telemetry/retention/report.js';
import { RetentionScheduler } from '../../src/telemetry/retention/scheduler.js';

const DAY = 86_400_000;
const at = (s: string) => Date.parse(s);

describe('the retention horizon', () => {
  it('is the end of the latest UTC month that ended more than RETENTION_DAYS ago', () => {
    // March ended 30 days before 2024-05-01: not more than 30 days ago yet.
    expect(targetHorizon(at('2024-05-01T00:00:00Z'), 30)).toBe(at('2024-03-01T00:00:00Z'));
    expect(targetHorizon(at('2024-05-01T00:00:00.001Z'), 30)).toBe(at('2024-04-01T00:00:00Z'));
    expect(targetHorizon(at('2024-05-20T12:00:00Z'), 30)).toBe(at('2024-04-01T00:00:00Z'));
    expect(targetHorizon(at('2024-03-01T00:00:00Z'), 1)).toBe(at('2024-02-01T00:00:00Z'));
    expect(targetHorizon(at('2024-03-02T00:00:00.001Z'), 1)).toBe(at('2024-03-01T00:00:00Z'));
    expect(targetHorizon(at('2025-01-15T00:00:00Z'), 365)).toBe(at('2024-01-01T00:00:00Z'));
  });
});

describe('the retention report', () => {
  const report = (more: Partial<RetentionReport>): RetentionReport => ({
    ran: true,
    days: 30,
    target: at('2024-04-01T00:00:00Z'),
    refreshed: 0,
    dropped: {},
    archive: {},
    ...more,
  });

  it('names the months dropped per table, the archive rows removed, and what was left and why', () => {
    expect(
      describeRetention(
        report({
          before: at('2024-02-01T00:00:00Z'),
          after: at('2024-03-01T00:00:00Z'),
          refreshed: 3,
          dropped: { sensor_logs: ['2024-02'], meter_logs: ['2024-02'] },
          archive: { sensor_logs_archive: { rows: 12, dropped: true } },
          skipped: { what: '2024-03', reason: '2 stale rollup quarters' },
        }),
      ),
    ).toEqual([
      'retention of 30 days: logs before 2024-04-01T00:00:00.000Z go; horizon moved from 2024-02-01T00:00:00.000Z to 2024-03-01T00:00:00.000Z',
      'rollups: 3 stale quarters refreshed first',
      'sensor_logs: months dropped: 2024-02',
      'meter_logs: months dropped: 2024-02',
      'sensor_logs_archive: 12 rows removed (dropped whole)',
      'left for a later pass: 2024-03 and every later month: 2 stale rollup quarters',
    ]);
    expect(describeRetention(report({ days: 0, ran: false }))).toEqual([
      'RETENTION_DAYS is 0: every log is kept, nothing was removed',
    ]);
    expect(describeRetention(report({}))).toEqual([
      'retention of 30 days: logs before 2024-04-01T00:00:00.000Z go; horizon stays at none',
      'nothing was dropped',
    ]);
  });
});

describe('the retention scheduler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a pass after the first delay, then every interval, and none once stopped', async () => {
    vi.useFakeTimers();
    const signals: AbortSignal[] = [];
    const reports: RetentionReport[] = [];
    const errors: unknown[] = [];
    let n = 0;
    const scheduler = new RetentionScheduler(
      async (signal) => {
        signals.push(signal);
        if (++n === 2) throw new Error('database gone');
        return { ran: true } as RetentionReport;
      },
      {
        intervalMs: DAY / 24,
        firstDelayMs: 60_000,
        onReport: (r) => reports.push(r),
        onError: (e) => errors.push(e),
      },
    );
    scheduler.start();
    await vi.advanceTimersByTimeAsync(59_999);
    expect(n).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(n).toBe(1);
    await vi.advanceTimersByTimeAsync(DAY / 24);
    expect(n).toBe(2); // a failed pass is reported, and the next one still comes
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(DAY / 24);
    expect(n).toBe(3);
    expect(reports).toHaveLength(2);
    await scheduler.stop();
    expect(signals[0].aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(DAY);
    expect(n).toBe(3);
  });
});
