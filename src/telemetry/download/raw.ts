import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { keysetPages } from '../../db/pager.js';
import type { Format } from '../../export/records.js';
import { isoSql, parseRange } from '../../time.js';
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

const PAGE_ROWS = 5_000;
const RAW_FIELDS = ['sensorID', 'value', 'timestamp'];
const ISO = isoSql('ts');
const LINE: Record<Format, string> = {
  json: `'{"sensorID":' || $1::int || ',"value":' || value::text || ',"timestamp":"' || ${ISO} || '"}'`,
  csv: `$1::int || ',' || value::text || ',' || ${ISO}`,
};

export async function openRawSensorLogs(
  db: Queryable,
  access: Access,
  body: { sensorId: number; start: string; end: string },
  format: Format,
): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_RAW_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const sql = (op: string) => `WITH p AS (
      SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 AND ts ${op} $2::timestamptz AND ts < $3::timestamptz ORDER BY ts LIMIT ${PAGE_ROWS})
    SELECT count(*)::int AS n, max(ts)::text AS last, string_agg(${LINE[format]}, ${SQL_SEPARATOR[format]}) AS text FROM p`;
  type RawPage = { n: number; last: string | null; text: string | null };
  const until = new Date(end).toISOString();
  // The first page from start (included), each later one after the last time of the one before.
  const pages = keysetPages<string, { text: string }>(PAGE_ROWS, async (after) => {
    const [page] = await db.query<RawPage>(
      sql(after === undefined ? '>=' : '>'),
      [body.sensorId, after ?? new Date(start).toISOString(), until],
      { indexOrder: true },
    );
    return { page: { text: page.text ?? '' }, rows: page.n, last: page.last ?? undefined };
  });
  return { fields: RAW_FIELDS, pages };
}
