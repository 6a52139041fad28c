import { Readable } from 'node:stream';
import Negotiator from 'negotiator';
import { stringify } from 'csv-stringify/sync';

// The download routes answer a list of records as JSON (an array of objects) or, when the request's
// Accept header prefers it, as CSV (a header line of the field names, one line per record, RFC 4180
// quoting, null as an empty field). Either way the body is written page by page as the pages come
// from the database, so a response of millions of records holds one page in memory at a time.
// A CSV is opened in spreadsheets: a text field that would run as a formula there (CWE-1236) is
// neutralised, see CSV_OPTIONS; encode-sql.ts does the same in the lines the database writes.

export type Format = 'json' | 'csv';

export const MEDIA_TYPE: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** CSV only when the Accept header prefers text/csv to application/json; JSON otherwise (and without Accept). */
export function negotiateFormat(accept: string | undefined): Format {
  if (!accept) return 'json';
  return new Negotiator({ headers: { accept } }).mediaType(['application/json', 'text/csv']) ===
    'text/csv'
    ? 'csv'
    : 'json';
}

/** A record as the values of its fields, in the order of the field names; times already ISO strings. */
export type Values = unknown[];

/**
 * A page of records already encoded in the response's format by whoever read them (the database can
 * do it faster than JavaScript for millions of rows): JSON objects joined by ",", or CSV lines joined
 * by CRLF, without a separator before the first or after the last.
 */
export interface EncodedPage {
  text: string;
}

export type Page = Values[] | EncodedPage;

/** Record separators inside an encoded page, per format. */
export const SEPARATOR: Record<Format, string> = { json: ',', csv: '\r\n' };

/**
 * The response body for pages of records. The first page is read before this returns, so that an
 * error before the first byte becomes an error response rather than a cut-off body.
 */
export async function recordsBody(
  format: Format,
  fields: readonly string[],
  pages: AsyncIterator<Page>,
): Promise<Readable> {
  const first = await pages.next();
  const encode = format === 'json' ? jsonEncoder(fields) : csvEncoder(fields);
  async function* body(): AsyncGenerator<string> {
    yield encode.head;
    let page = first;
    let firstRecord = true;
    while (!page.done) {
      const value = page.value;
      if (Array.isArray(value) ? value.length : value.text) {
        yield Array.isArray(value)
          ? encode.page(value, firstRecord)
          : encode.text(value.text, firstRecord);
        firstRecord = false;
      }
      page = await pages.next();
    }
    yield encode.tail;
  }
  return Readable.from(body(), { objectMode: false });
}

interface Encoder {
  head: string;
  page(rows: Values[], first: boolean): string;
  text(encoded: string, first: boolean): string;
  tail: string;
}

function jsonEncoder(fields: readonly string[]): Encoder {
  const keys = fields.map((f, i) => `${i ? ',' : '{'}${JSON.stringify(f)}:`);
  const record = (row: Values) => {
    let s = '';
    for (let i = 0; i < keys.length; i++) s += keys[i] + jsonValue(row[i]);
    return `${s}}`;
  };
  return {
    head: '[',
    page(rows, first) {
      let s = first ? '' : ',';
      for (let i = 0; i < rows.length; i++) s += (i ? ',' : '') + record(rows[i]);
      return s;
    },
    text: (encoded, first) => (first ? encoded : `,${encoded}`),
    tail: ']',
  };
}

/**
 * A field's value as JSON.stringify writes it, numbers and null without the call (most of the
 * values of telemetry records, tens of thousands a page); undefined as null.
 */
function jsonValue(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? `${v}` : 'null';
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v);
}

const CSV_OPTIONS = {
  record_delimiter: 'windows' as const, // RFC 4180: CRLF
  cast: { boolean: (v: boolean) => String(v) },
  // A text field beginning with = + - @, a tab or a carriage return (or the full-width = + - @) gets
  // a single quote in front, so a spreadsheet shows it as text instead of running it; numbers (a
  // negative one too) are left as they are.
  escape_formulas: true,
  // Quoted when it holds a line break of its own (csv-stringify quotes only the CRLF record
  // delimiter; a lone CR or LF would start a new row, whose first field could be a formula) or a
  // semicolon, the list separator of many locales (a spreadsheet there would split the field).
  quoted_match: /[\r\n;]/,
};

function csvEncoder(fields: readonly string[]): Encoder {
  return {
    head: stringify([fields as string[]], CSV_OPTIONS),
    page: (rows) =>
      stringify(
        rows.map((r) => r.map(csvValue)),
        CSV_OPTIONS,
      ),
    text: (encoded) => `${encoded}\r\n`,
    tail: '',
  };
}

/** null as an empty field; an id list as one field, its items separated by spaces. */
const csvValue = (v: unknown) =>
  v === null || v === undefined ? '' : Array.isArray(v) ? v.join(' ') : v;
