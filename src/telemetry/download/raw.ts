import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { MAX_RAW_DAYS, parseRange, type Download } from './index.js';

// Raw sensor logs, [start, end) ascending, read in pages by key (sensor, ts > last seen): no
// transaction or connection is held while the client reads, and memory holds one page.

const PAGE_ROWS = 20_000;
export const RAW_FIELDS = ['sensorID', 'value', 'timestamp'];

export async function openRawSensorLogs(db: Queryable, access: Access, body: { sensorId: number; start: string; end: string }): Promise<Download> {
  const { start, end } = parseRange(body, MAX_RAW_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const id = body.sensorId;
  async function* pages(): AsyncGenerator<unknown[][]> {
    let from = start;
    let op = '>=';
    for (;;) {
      const rows = await db.query<{ value: number; t: number }>(
        `SELECT value, date_part('epoch', ts) * 1000 AS t FROM sensor_logs
          WHERE sensor_id = $1 AND ts ${op} to_timestamp($2::float8 / 1000) AND ts < to_timestamp($3::float8 / 1000)
          ORDER BY ts LIMIT ${PAGE_ROWS}`,
        [id, from, end],
      );
      const page = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) page[i] = [id, rows[i].value, new Date(Math.round(rows[i].t)).toISOString()];
      yield page;
      if (rows.length < PAGE_ROWS) return;
      from = Math.round(rows[rows.length - 1].t);
      op = '>';
    }
  }
  return { fields: RAW_FIELDS, pages: pages() };
}
