import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { keysetPages, pagesInTurn } from '../../db/pager.js';
import type { Format } from '../../export/records.js';
import { isoSql, parseRange } from '../../time.js';
import { dayPowers, daySelect, daysTable, dayTimeText, decodeDays } from '../archive/days.js';
import { SQL_SEPARATOR } from './encode-sql.js';
import { MAX_RAW_DAYS, type Download } from './index.js';

// Raw sensor logs, [start, end) ascending, read in pages by key (sensor, ts > last seen; see
// db/pager.ts): no transaction or connection is held while the client reads. The
// database writes each page in the response's format (JSON objects or CSV lines): for millions of
// rows that is several times faster than making an object of every row here, and it keeps the
// service's memory flat. Values are float8 text (the shortest text that reads back as the same
// number), times UTC with milliseconds. The lines are joined in the order the page's rows come in,
// which is the index order of its ORDER BY … LIMIT (a plain aggregate over that subquery, never
// parallel): an ORDER BY inside string_agg would sort every page again (PostgreSQL before 16 does
// not see that its input is sorted), 40 % of a page's time.
// The range is read in spans of whole UTC days holding about a page of logs each, as the daily
// rollups count them (spans): each span is paged by key on its own, and the next span's first page
// is read while the current one's are sent, on a second connection, so that the database writes two
// pages at once on two cores. The counts only place the cuts: a span holding more logs than counted
// (logs not rolled up yet) is paged like any range, and without rollups the range is one span.
// Archived days (archive/days.ts) are counted by their own counts, and a run of them is a span of its
// own, read as one page: each day decoded once, in its own order (daysPageSql). That page is a
// prepared statement (two texts: JSON and CSV), planned once per connection, and is sent without
// indexOrder: its plan is the days' key whatever the statistics (no range of rows to fetch by bitmap;
// its ORDER BY is over the few days of a span), so it needs no transaction of its own either: an
// archived month's CSV (43,200 logs, ten such pages) read in process took 39 ms instead of 46.

const PAGE_ROWS = 5_000;
const RAW_FIELDS = ['sensorID', 'value', 'timestamp'];
const ISO = isoSql('ts');
/** A line's text before its value (the sensor's id), between its value and its time, and after its time. */
const PARTS: Record<Format, { head: string; middle: string; tail?: string }> = {
  json: {
    head: `'{"sensorID":' || $1::int || ',"value":'`,
    middle: `',"timestamp":"'`,
    tail: `'"}'`,
  },
  csv: { head: `$1::int || ','`, middle: `','` },
};
const line = (format: Format, head: string, time: string) => {
  const { middle, tail } = PARTS[format];
  return [head, 'value::text', middle, time, ...(tail ? [tail] : [])].join(' || ');
};
const LINE = (format: Format) => line(format, PARTS[format].head, ISO);
/**
 * The line of an archived day's log (daysPageSql): its head (p.head) and the time's date (p.date)
 * made once a day, the time of day by dayTimeText: the same text as LINE's, at about half its cost.
 */
const DAY_LINE = (format: Format) =>
  line(format, 'p.head', `p.date || ${dayTimeText('ms')} || 'Z'`);

/**
 * A span of [start, end): from, to, and whether its days were archived when the spans were made
 * (each at most a page of logs: its page is read day by day, see daysPageSql).
 */
export type RawSpan = [from: number, to: number, archived: boolean];

/**
 * [start, end) cut at UTC midnights into spans of at most about PAGE_ROWS logs, by the archived days'
 * own counts and by the daily rollups' (a day holding more is a span of its own; one span where there
 * are none), and where days go from archived to rows or back: a run of archived days (of at most a
 * page each) is read otherwise than rows.
 */
export async function rawSpans(
  db: Queryable,
  sensorId: number,
  start: number,
  end: number,
): Promise<RawSpan[]> {
  const range = [sensorId, new Date(start).toISOString(), new Date(end).toISOString()];
  const [counted, archived] = await Promise.all(
    [
      `SELECT round(date_part('epoch', bucket) * 1000) AS d, count AS n FROM sensor_rollups
        WHERE sensor_id = $1 AND level = 1440 AND bucket > $2::timestamptz - interval '1 day' AND bucket < $3::timestamptz
        ORDER BY bucket`,
      `SELECT round(date_part('epoch', day) * 1000) AS d, n FROM ${daysTable('sensor')}
        WHERE sensor_id = $1 AND day > $2::timestamptz - interval '1 day' AND day < $3::timestamptz
        ORDER BY day`,
    ].map((sql) => db.query<{ d: number; n: number }>(sql, range, { indexOrder: true })),
  );
  // Per day: its count, and whether it is archived (a day of more than a page is read as rows are).
  const days = new Map<number, { n: number; archived: boolean }>();
  for (const r of counted) days.set(Number(r.d), { n: Number(r.n), archived: false });
  for (const r of archived)
    days.set(Number(r.d), { n: Number(r.n), archived: Number(r.n) <= PAGE_ROWS });
  const spans: RawSpan[] = [];
  let from = start;
  let rows = 0;
  let kind: boolean | undefined;
  for (const d of [...days.keys()].sort((x, y) => x - y)) {
    const { n, archived: a } = days.get(d)!;
    // Cut before a day that would make the span hold more than a page, or that is read otherwise.
    if (d > from && ((rows > 0 && rows + n > PAGE_ROWS) || (kind !== undefined && kind !== a))) {
      spans.push([from, d, kind ?? false]);
      from = d;
      rows = 0;
      kind = undefined;
    }
    rows += n;
    kind ??= a;
  }
  spans.push([from, end, kind ?? false]);
  return spans;
}

/**
 * A page of logs: the first PAGE_ROWS in time order of those after (>) or from (>=) $2 and before $3,
 * among the rows and the archived days (archive/days.ts). Each branch is ordered and cut at a page
 * and the two are merged (a Merge Append: no sort of the page), so the rows branch reads its index
 * as before, and the archive branch decodes only the days that can hold logs of the page's range
 * (by key), those of a span, found in day order (an archived day is decoded by every page that
 * reads from it: a day of more than a page's logs is decoded once per page of it).
 */
const pageSql = (op: '>=' | '>') => `SELECT ts, value FROM (
      (SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 AND ts ${op} $2::timestamptz AND ts < $3::timestamptz ORDER BY ts LIMIT ${PAGE_ROWS})
      UNION ALL
      (SELECT d.ts, d.value FROM ${daysTable('sensor')} a ${decodeDays('sensor')}
        WHERE a.sensor_id = $1 AND a.day > $2::timestamptz - interval '1 day' AND a.last_ts ${op} $2::timestamptz
          AND a.day < $3::timestamptz AND a.first_ts < $3::timestamptz AND d.ts ${op} $2::timestamptz AND d.ts < $3::timestamptz
        ORDER BY d.ts LIMIT ${PAGE_ROWS})) g
    ORDER BY ts LIMIT ${PAGE_ROWS}`;

/**
 * The page of a span of archived days (rawSpans): each day in the span decoded once, in its own order
 * (its arrays are in time order), and written as the page's lines, the days in the order of their
 * key; no merge with rows and no sort (and the times of a day wholly in the range are not compared). Whether the span holds rows too (a day moved back to rows by
 * an upload since the spans were made: then the span is read as rows are, pageSql) comes with it,
 * one lookup of the rows' index.
 */
const daysPageSql = (
  format: Format,
) => `SELECT coalesce(sum(x.n), 0)::int AS n, string_agg(x.text, ${SQL_SEPARATOR[format]}) AS text,
      EXISTS (SELECT 1 FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2::timestamptz AND ts < $3::timestamptz) AS rows
    FROM (SELECT x.n, x.text FROM ${daysTable('sensor')} a
        CROSS JOIN LATERAL (
          SELECT to_char(a.day AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"') AS date, ${PARTS[format].head} AS head, ${dayPowers('sensor')},
                 a.day >= $2::timestamptz AND a.day + interval '1 day' <= $3::timestamptz AS whole OFFSET 0) p
        CROSS JOIN LATERAL (
          SELECT count(*) AS n, string_agg(${DAY_LINE(format)}, ${SQL_SEPARATOR[format]}) AS text
            FROM ${daySelect('sensor', 'a', true, 'p')} d
           WHERE p.whole OR (ts >= $2::timestamptz AND ts < $3::timestamptz)) x
       WHERE a.sensor_id = $1 AND a.day > $2::timestamptz - interval '1 day' AND a.day < $3::timestamptz
       ORDER BY a.day) x`;

export async function openRawSensorLogs(
  db: Queryable,
  access: Access,
  body: { sensorId: number; start: string; end: string },
  format: Format,
): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_RAW_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const sql = (op: '>=' | '>') => `WITH p AS (${pageSql(op)})
    SELECT count(*)::int AS n, max(ts)::text AS last, string_agg(${LINE(format)}, ${SQL_SEPARATOR[format]}) AS text FROM p`;
  type RawPage = { n: number; last: string | null; text: string | null };
  const range = (from: number, to: number) => [
    body.sensorId,
    new Date(from).toISOString(),
    new Date(to).toISOString(),
  ];
  // In each span, the first page from its start (included), each later one after the last time of
  // the one before.
  const span = (from: number, to: number) =>
    keysetPages<string, { text: string }>(PAGE_ROWS, async (after) => {
      const [page] = await db.query<RawPage>(
        sql(after === undefined ? '>=' : '>'),
        after === undefined ? range(from, to) : [body.sensorId, after, new Date(to).toISOString()],
        { indexOrder: true },
      );
      return { page: { text: page.text ?? '' }, rows: page.n, last: page.last ?? undefined };
    });
  // A span of archived days: one page, or read as rows are where it holds rows too.
  async function* days(from: number, to: number): AsyncGenerator<{ text: string }> {
    const [page] = await db.query<{ n: number; text: string | null; rows: boolean }>(
      daysPageSql(format),
      range(from, to),
      { prepared: true },
    );
    if (page.rows) yield* span(from, to);
    else if (page.n) yield { text: page.text ?? '' };
  }
  const spans = await rawSpans(db, body.sensorId, start, end);
  return {
    fields: RAW_FIELDS,
    pages: pagesInTurn(
      spans.map(
        ([a, b, archived]) =>
          () =>
            archived ? days(a, b) : span(a, b),
      ),
    ),
  };
}
