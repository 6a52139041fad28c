import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordsBody, type Format, type Page } from '../../src/export/records.js';
import { ENCODE, INTERPOLATED_FIELDS } from '../../src/telemetry/download/interpolated.js';
import { isoTime } from '../../src/time.js';

// Interpolated values are encoded by the route itself (ENCODE); the text must be what the generic
// encoder of export/records.ts writes for the same records, in both formats.

async function body(format: Format, page: Page): Promise<string> {
  async function* pages() {
    yield page;
  }
  let text = '';
  for await (const chunk of await recordsBody(format, INTERPOLATED_FIELDS, pages()))
    text += String(chunk);
  return text;
}

const value = fc.oneof(
  fc.constant(null),
  fc.double(),
  fc.constantFrom(0, -0, 1e21, 1e-7, -123.456, Number.MAX_VALUE, Number.MIN_VALUE),
);
const record = fc.tuple(
  fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
  value,
);

describe('interpolated values: the route encodes them as the generic encoder does', () => {
  for (const format of ['json', 'csv'] as const)
    it(`${format}: the same text for any records`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(record, { maxLength: 20 }), async (rows) => {
          const values = rows.map(([id, t, v]) => [id, isoTime(t), v]);
          const sep = format === 'json' ? ',' : '\r\n';
          const text = values
            .map(([id, t, v]) => ENCODE[format](id as number, t as string, v as number | null))
            .join(sep);
          expect(await body(format, { text })).toBe(await body(format, values));
        }),
        { numRuns: 300 },
      );
    });

  it('json: a value that is not finite is null, as JSON.stringify writes it', () => {
    expect(ENCODE.json(7, '2026-01-01T00:00:00.000Z', Infinity)).toBe(
      '{"sensorID":7,"timestamp":"2026-01-01T00:00:00.000Z","value":null}',
    );
    expect(ENCODE.csv(7, '2026-01-01T00:00:00.000Z', null)).toBe('7,2026-01-01T00:00:00.000Z,');
  });
});
