import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordsBody, type Values } from '../../src/export/records.js';

// The JSON encoder of the download routes writes numbers and nulls itself (jsonValue) instead of
// through JSON.stringify: the body must still be what JSON.stringify makes of the same records.

async function body(fields: string[], pages: Values[][]): Promise<string> {
  async function* all() {
    yield* pages;
  }
  let text = '';
  for await (const chunk of await recordsBody('json', fields, all())) text += String(chunk);
  return text;
}

const value = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e21, 1e-7, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.string(),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
);

describe('records as JSON', () => {
  it('is what JSON.stringify writes of the records, for any values', async () => {
    const fields = ['a', 'b "quoted"', 'c'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.array(value, { minLength: 3, maxLength: 3 }), { maxLength: 5 }), {
          maxLength: 3,
        }),
        async (pages) => {
          const records = pages
            .flat()
            .map((row) => Object.fromEntries(fields.map((f, i) => [f, row[i] ?? null])));
          expect(await body(fields, pages)).toBe(JSON.stringify(records));
        },
      ),
      { numRuns: 500 },
    );
  });
});
