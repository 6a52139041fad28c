import fc from 'fast-check';

// What the fuzz test throws at the routes: values that break naive code (text PostgreSQL cannot
// hold, numbers beyond every range, deep nesting, prototype keys, times that name no instant),
// spliced into otherwise valid requests so that they reach past the first check.

export const BAD_TIMES = [
  '2026-11-10T24:00:00Z',
  '2026-11-10T24:59:60Z',
  '2026-11-10T23:59:60Z',
  '2026-02-30T10:00:00Z',
  '2026-11-10',
  '2026-11-10T10:00:00+24:00',
  '+275760-09-13T00:00:00Z',
];

/** Raw JSON texts, spliced in where a value goes (JSON.stringify could not write most of them). */
const RAW_VALUES = [
  '"\\ud800"',
  '"a\\udfffb"',
  '"\\u0000"',
  '"x\\u0000y"',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '-0',
  '9007199254740993',
  '1.7976931348623157e308',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '"__proto__"',
  '[]',
  '{}',
  'null',
  '"' + 'x'.repeat(100_000) + '"',
  '[' + '1,'.repeat(20_000) + '1]',
  ...BAD_TIMES.map((t) => JSON.stringify(t)),
];

const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** A raw JSON value to splice in. */
export const rawValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...RAW_VALUES) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(10, 1000, 50_000)
      .chain((d) => fc.constantFrom(deepArray(d), deepObject(d))),
  },
  // Any code units, lone surrogates included (JSON.stringify writes those as \udXXX escapes).
  {
    weight: 2,
    arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((s) => JSON.stringify(s)),
  },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 })
      .map((units) => JSON.stringify(String.fromCharCode(...units))),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
      )
      .map((v) => JSON.stringify(v)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
);

const MARK = '\u0001fuzz\u0001';

/** Every path (keys and indices) of a JSON value, the root included. */
function pathsOf(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...pathsOf(x, [...at, i])));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...at, k]));
  return out;
}

/** A copy of v with the value at path replaced. */
export function setAt(v: unknown, path: (string | number)[], value: unknown): unknown {
  if (!path.length) return value;
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  copy[path[0]] = setAt(copy[path[0]], path.slice(1), value);
  return copy;
}

/**
 * A body text derived from a valid body: a value somewhere (or a new key, or the whole body)
 * replaced by a raw value; or the body cut short; or no JSON at all.
 */
export function mutatedBody(valid: unknown): fc.Arbitrary<string> {
  const paths = pathsOf(valid);
  const splice = fc
    .tuple(
      fc.nat(paths.length - 1),
      fc.boolean(),
      fc.constantFrom(
        'x',
        '__proto__',
        'constructor',
        'prototype',
        'readings',
        'siteIds',
        'timestamp',
      ),
      rawValue,
    )
    .map(([i, asNewKey, key, raw]) => {
      const path =
        asNewKey && typeof valid === 'object' && valid !== null && !Array.isArray(valid)
          ? [key]
          : paths[i];
      return JSON.stringify(setAt(valid, path, MARK)).replace(JSON.stringify(MARK), raw);
    });
  const text = JSON.stringify(valid) ?? '';
  return fc.oneof(
    { weight: 6, arbitrary: splice },
    { weight: 1, arbitrary: fc.nat(Math.max(0, text.length - 1)).map((n) => text.slice(0, n)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 50 }) },
  );
}

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  '',
];

/** Raw (already URL-encoded) query and path values. */
export const rawQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '%00',
    'a%00b',
    '%ED%A0%80',
    '%F0%9F%98%80',
    '%',
    '%zz',
    '-1',
    '0',
    '99999999999999999999',
    '1e400',
    'NaN',
    '1.5',
    'true',
    '',
    '*',
    '1,2,,3',
    '%2C'.repeat(500),
    'x'.repeat(5000),
    '..%2F..%2F',
    ...BAD_TIMES.map(encodeURIComponent),
  ),
  fc
    .string({ unit: 'binary', maxLength: 20 })
    .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
  fc.integer().map(String),
);
