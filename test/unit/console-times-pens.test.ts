import { describe, expect, it } from 'vitest';
import { fromLocalInput, toLocalInput } from '../../console/src/format.js';
import { FIELDS, readPens, toTrend, trendCsv, writePens } from '../../console/src/pens.js';

// The console's wall-clock conversions (custom ranges and ticket days are typed in the zone shown)
// and its multi-pen addresses and CSV, without a browser.

describe('wall-clock times of a zone', () => {
  it('reads and writes a datetime-local value in the zone, across clock changes', () => {
    const chicago = 'America/Chicago';
    expect(fromLocalInput('2026-07-01T12:00', chicago)).toBe(Date.parse('2026-07-01T17:00:00Z'));
    expect(fromLocalInput('2026-12-01T12:00', chicago)).toBe(Date.parse('2026-12-01T18:00:00Z'));
    expect(fromLocalInput('2026-12-01T12:00', 'UTC')).toBe(Date.parse('2026-12-01T12:00:00Z'));
    expect(toLocalInput(Date.parse('2026-07-01T17:00:00Z'), chicago)).toBe('2026-07-01T12:00');
    // 01:30 happens twice on 1 November 2026: the first (CDT, UTC-5) is meant.
    expect(fromLocalInput('2026-11-01T01:30', chicago)).toBe(Date.parse('2026-11-01T06:30:00Z'));
    // 02:30 never happens on 8 March 2026: read with the offset before the change (CST, UTC-6).
    expect(fromLocalInput('2026-03-08T02:30', chicago)).toBe(Date.parse('2026-03-08T08:30:00Z'));
    expect(fromLocalInput('yesterday', chicago)).toBeNaN();
    // Every quarter-hour of a weekend with a clock change reads back as itself (the repeated hour
    // as its first occurrence, which shows the same wall-clock time).
    const paris = 'Europe/Paris';
    for (
      let t = Date.parse('2026-10-24T00:00:00Z');
      t < Date.parse('2026-10-27T00:00:00Z');
      t += 900_000
    ) {
      const back = fromLocalInput(toLocalInput(t, paris), paris);
      expect([t, t - 3_600_000]).toContain(back);
      expect(toLocalInput(back, paris)).toBe(toLocalInput(t, paris));
    }
  });
});

describe('multi-pen addresses', () => {
  it('keeps known, distinct pens (8 at most), a time-weighted basis only where one exists', () => {
    const pens = readPens(
      [
        '1.sensor.10100.avg.s',
        '1.sensor.10100.avg.s', // repeated
        '1.sensor.10100.avg.t',
        '1.sensor.10100.min.t', // no time-weighted minimum
        '2.pump.10401.runningPercent.t',
        '1.meter.10300.volume.s',
        '1.tank.10500.avgExitTankLevel.s',
        '1.pump.10401.value.r', // raw values are a sensor's
        '1.sensor.10100.anything.r',
        '1.valve.1.avg.s',
        'x',
      ].join(','),
    );
    expect(writePens(pens)).toBe(
      '1.sensor.10100.avg.s,1.sensor.10100.avg.t,2.pump.10401.runningPercent.t,1.meter.10300.volume.s,1.tank.10500.avgExitTankLevel.s,1.sensor.10100.value.r',
    );
    const many = Array.from({ length: 12 }, (_, i) => `1.sensor.${i + 1}.avg.s`).join(',');
    expect(readPens(many)).toHaveLength(8);
  });

  it('puts pens on one time axis, one y axis per unit, and writes one CSV column per pen', () => {
    const [a, b, c] = readPens('1.sensor.1.avg.s,1.pump.2.runningPercent.t,2.sensor.3.value.r');
    const infos = [
      { pen: a, label: 'A (psi)', unit: 'psi', equipment: undefined },
      { pen: b, label: 'B, time-weighted (%)', unit: '%', equipment: undefined },
      { pen: c, label: 'C (psi)', unit: 'psi', equipment: undefined },
    ];
    const h = (n: number) => new Date(Date.UTC(2026, 0, 1, n)).toISOString();
    const answers = new Map<string, never>([
      [
        'a',
        [
          { start: h(0), avg: 1 },
          { start: h(1), avg: 2 },
        ] as never,
      ],
      ['b', [{ start: h(1), runningPercent: 50 }] as never],
      ['c', [{ timestamp: h(2), value: 7 }] as never],
    ]);
    const t = toTrend(infos, answers, (p) => (p === a ? 'a' : p === b ? 'b' : 'c'));
    expect(t.axes).toEqual([
      { scale: 'unit:psi', label: 'psi' },
      { scale: 'unit:%', label: '%' },
    ]);
    expect(t.series.map((s) => s.values)).toEqual([
      [1, 2, null],
      [null, 50, null],
      [null, null, 7],
    ]);
    expect(trendCsv(t).split('\r\n')).toEqual([
      'time,A (psi),"B, time-weighted (%)",C (psi)',
      `${h(0)},1,,`,
      `${h(1)},2,50,`,
      `${h(2)},,,7`,
      '',
    ]);
  });

  it("gives every tank group field a unit: its level registers', feet where they have none", () => {
    for (const [name, field] of Object.entries(FIELDS.tank)) {
      expect(field.unit({ levelUnits: 'm', units: 'bbl' }), name).toBe('m');
      expect(field.unit({}), name).toBe('ft');
    }
  });
});
