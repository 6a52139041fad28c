import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { keysetPages, pagesInTurn } from '../../db/pager.js';
import type { Format } from '../../export/records.js';
import { isoSql, parseRange } from '../../time.js';
import { daysTable, decodeDays } from '../archive/days.js';
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

const PAGE_ROWS = 5_000;
const RAW_FIELDS = ['sensorID', 'value', 'timestamp'];
const ISO = isoSql('ts');
const LINE: Record<Format, string> = {
  json: `'{"sensorID":' || $1::int || ',"value":' || value::text || ',"timestamp":"' || ${ISO} || '"}'`,
  csv: `$1::int || ',' || value::text || ',' || ${ISO}`,
};

/**
 * [start, end) cut at UTC midnights into spans of at most about PAGE_ROWS logs by the daily rollups'
 * counts (a day holding more is a span of its own); one span where there are none.
 */
export async function rawSpans(
  db: Queryable,
  sensorId: number,
  start: number,
  end: number,
): Promise<[number, number][]> {
  const days = await db.query<{ d: number; n: number }>(
    `SELECT round(date_part('epoch', bucket) * 1000) AS d, count AS n FROM sensor_rollups
      WHERE sensor_id = $1 AND level = 1440 AND bucket > $2::timestamptz - interval '1 day' AND bucket < $3::timestamptz
      ORDER BY bucket`,
    [sensorId, new Date(start).toISOString(), new Date(end).toISOString()],
    { indexOrder: true },
  );
  const spans: [number, number][] = [];
  let from = start;
  let rows = 0;
  for (const day of days) {
    const d = Number(day.d);
    const n = Number(day.n);
    // Cut before a day that would make the span hold more than a page.
    if (rows > 0 && rows + n > PAGE_ROWS && d > from) {
      spans.push([from, d]);
      from = d;
      rows = 0;
    }
    rows += n;
  }
  spans.push([from, end]);
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

export async function openRawSensorLogs(
  db: Queryable,
  access: Access,
  body: { sensorId: number; start: string; end: string },
  format: Format,
): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_RAW_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const sql = (op: '>=' | '>') => `WITH p AS (${pageSql(op)})
    SELECT count(*)::int AS n, max(ts)::text AS last, string_agg(${LINE[format]}, ${SQL_SEPARATOR[format]}) AS text FROM p`;
  type RawPage = { n: number; last: string | null; text: string | null };
  // In each span, the first page from its start (included), each later one after the last time of
  // the one before.
  const span = (from: number, to: number) => () =>
    keysetPages<string, { text: string }>(PAGE_ROWS, async (after) => {
      const [page] = await db.query<RawPage>(
        sql(after === undefined ? '>=' : '>'),
        [body.sensorId, after ?? new Date(from).toISOString(), new Date(to).toISOString()],
        { indexOrder: true },
      );
      return { page: { text: page.text ?? '' }, rows: page.n, last: page.last ?? undefined };
    });
  const spans = await rawSpans(db, body.sensorId, start, end);
  return { fields: RAW_FIELDS, pages: pagesInTurn(spans.map(([a, b]) => span(a, b))) };
}
