import type { Format } from '../../export/records.js';
import { isoSql } from '../../time.js';
import type { TelemetryKind } from '../kinds.js';

// The database writes every summary in the response's format (JSON objects or CSV lines, as
// src/export/records.ts writes them) and joins each equipment's summaries into one text: for tens of
// thousands of rows that is several times faster than decoding each row in Node and encoding it
// again. Numbers are float8 text (the shortest text that reads back as the same number), times UTC
// with milliseconds.

/** Mean as text; a quotient that underflows (sums near 1e-308) is divided as numeric, where the database allows it. */
const mean = (sum: string, n: string) =>
  `CASE WHEN ${n} = 0 THEN NULL WHEN abs(${sum}) < 1e-290 THEN (${sum}::numeric / ${n})::text ELSE (${sum} / ${n})::text END`;
const num = (c: string) => `${c}::text`;
const text = (c: string) => `§${c}`; // a text field: quoted per format below

/** SQL of each field after id, start, end and count, over a row of merged unit columns (units.ts), in the DTO's order. */
const FIELDS: Record<TelemetryKind, string[]> = {
  sensor: [num('v_min'), num('v_max'), mean('v_sum', 'v_n'), num('v_first'), num('v_last')],
  // A meter's volume is null where no sample of the bucket carried a total.
  meter: [
    `CASE WHEN tv_first IS NULL THEN NULL ELSE tv_inner::text END`,
    num('tv_latest'),
    mean('fr_sum', 'fr_n'),
    num('fr_max'),
    mean('p_sum', 'p_n'),
  ],
  pump: [
    `CASE WHEN run_n = 0 THEN NULL ELSE (100 * run_true::float8 / run_n)::text END`,
    mean('f_sum', 'f_n'),
    mean('p_sum', 'p_n'),
    num('p_max'),
    num('status_id_latest'),
    text('status_latest'),
  ],
  tank: [
    num('e_min'),
    num('e_max'),
    mean('e_sum', 'e_n'),
    num('x_min'),
    num('x_max'),
    mean('x_sum', 'x_n'),
    num('tv_latest'),
  ],
};

const ISO = (c: string) => isoSql(`(${c})`);
/**
 * As export/records.ts writes CSV text (csv-stringify's escape_formulas and quoted_match): a field
 * that would run as a formula in a spreadsheet (beginning with = + - @, a tab or a carriage return,
 * or the full-width = + - @) gets a single quote in front; then, RFC 4180, a field holding a comma,
 * quote, line break (or a semicolon, a list separator too) is quoted, its quotes doubled.
 */
const csvText = (c: string) => {
  const safe = `CASE WHEN left(${c}, 1) IN ('=', '+', '-', '@', chr(9), chr(13), '＝', '＋', '－', '＠') THEN '''' || ${c} ELSE ${c} END`;
  return `CASE WHEN ${c} ~ '[",;\\r\\n]' THEN '"' || replace(${safe}, '"', '""') || '"' ELSE ${safe} END`;
};

/**
 * Text whose characters 29, 30 and 31 are written as chr(29) followed by '0', '1' or '2': with holes
 * (summaryTail), 30 and 31 separate what the time-weighted summaries read, and a CSV text field (a
 * pump's status) is the only text that could hold them (JSON text escapes them). unescapeSeparators
 * reads them back.
 */
const escapeSeparators = (c: string) =>
  `replace(replace(replace(${c}, chr(29), chr(29) || '0'), chr(30), chr(29) || '1'), chr(31), chr(29) || '2')`;

const ESCAPED = new RegExp(`${String.fromCharCode(29)}([012])`, 'g');

/** The text escapeSeparators wrote, as it was. */
export const unescapeSeparators = (text: string) =>
  text.includes('\x1d')
    ? text.replace(ESCAPED, (_, d: string) => String.fromCharCode(29 + Number(d)))
    : text;

/** The separators of SEPARATOR (export/records.ts) as SQL literals. */
export const SQL_SEPARATOR: Record<Format, string> = { json: `','`, csv: `E'\\r\\n'` };

/**
 * One text per row of a relation with columns id, count and the merged unit columns: the encoded
 * summary of [start, end) (SQL expressions giving timestamptz). `names` are the output field names.
 */
export function summaryLine(
  kind: TelemetryKind,
  format: Format,
  names: string[],
  start: string,
  end: string,
): string {
  const head =
    format === 'csv'
      ? `id::text || ',' || ${ISO(start)} || ',' || ${ISO(end)}`
      : `'{${JSON.stringify(names[0]).replaceAll("'", "''")}:' || id::text || ',"start":"' || ${ISO(start)} || '","end":"' || ${ISO(end)} || '"'`;
  return `${head} || ${summaryTail(kind, format, names)}`;
}

/**
 * The end of summaryLine's text, from the separator before count on (the time-weighted summaries
 * write id, start and end themselves). `holes`: fields (indexes after count) written as chr(31)
 * instead of their value, for the time-weighted summaries to put theirs in.
 */
export function summaryTail(
  kind: TelemetryKind,
  format: Format,
  names: string[],
  holes: number[] = [],
): string {
  const fields = FIELDS[kind].map((f, i) => (holes.includes(i) ? 'chr(31)' : f));
  if (format === 'csv') {
    const quoted = (c: string) => (holes.length ? escapeSeparators(csvText(c)) : csvText(c));
    const values = fields.map((f) => (f.startsWith('§') ? quoted(f.slice(1)) : f));
    return ['count::text', ...values.map((v) => `coalesce(${v}, '')`)]
      .map((v) => `',' || ${v}`)
      .join(' || ');
  }
  const values = fields.map((f) => (f.startsWith('§') ? `to_json(${f.slice(1)})::text` : f));
  const parts = ['count::text', ...values.map((v) => `coalesce(${v}, 'null')`)];
  return `${parts.map((v, i) => `'${`,${JSON.stringify(names[i + 3])}:`.replaceAll("'", "''")}' || ${v}`).join(' || ')} || '}'`;
}
