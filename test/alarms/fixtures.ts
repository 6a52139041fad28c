import type { Database } from '../../src/db/index.js';
import type { TestContext } from '../helper.js';
import { poster } from '../telemetry/fixtures.js';

export {
  METER,
  PUMP,
  SENSOR,
  SITE2_PUMP,
  SITE2_SENSOR,
  TANK,
  minutesAgo,
} from '../telemetry/fixtures.js';

/** Alarm routes of one client: send, batch, resolve, active; each returns { status, body }. */
export function alarmClient(ctx: TestContext, token: string) {
  const post = poster(ctx, token);
  return {
    send: (body: unknown) => post('alarms', body),
    batch: (siteId: number, alarms: unknown[]) => post('alarms/batch', { siteId, alarms }),
    resolve: (siteId: number, alarms: unknown[]) => post('alarms/resolve', { siteId, alarms }),
    active: (siteIds: number[], limit?: number) =>
      post('alarms/active', { siteIds, ...(limit ? { limit } : {}) }),
    post,
  };
}
export type AlarmClient = ReturnType<typeof alarmClient>;

/** Every alarm row, in id order, as stored (to show that a refused request changed nothing). */
export const alarmRows = (db: Database) => db.query(`SELECT * FROM site_alarms ORDER BY alarm_id`);

/** Open rows of one key: the number the partial unique index keeps at 0 or 1. */
export async function openCount(db: Database, siteId: number, alarmType: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM site_alarms WHERE site_id = $1 AND alarm_type = $2 AND resolved_at IS NULL`,
    [siteId, alarmType],
  );
  return row.n;
}
