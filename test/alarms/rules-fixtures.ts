import type { Database } from '../../src/db/index.js';
import { importDocument } from '../../src/provisioning/import.js';
import { findRules } from '../../src/alarms/rules/repository.js';
import { applyUnsaved, parseUnsaved } from '../../src/alarms/rules/unsaved.js';
import { bearer, type TestContext } from '../helper.js';

// Limit rules for the rule suites: imported like any provisioning document, and the alarms they raise as stored.

export async function importRules(db: Database, rules: Record<string, unknown>[]) {
  return importDocument(db, { alarmRules: rules });
}

export interface StoredAlarm {
  id: string;
  site_id: number;
  equipment_id: number | null;
  alarm_type: string;
  source: string;
  value: number | null;
  first_seen: Date;
  occurrences: number;
  resolved_at: Date | null;
  resolved_by: string | null;
}

/** Every alarm of a type, oldest first. */
export const alarmsOf = (db: Database, alarmType: string) =>
  db.query<StoredAlarm>(
    `SELECT alarm_id::text AS id, site_id, equipment_id, alarm_type, source, value, first_seen, occurrences,
            resolved_at, resolved_by
       FROM site_alarms WHERE alarm_type = $1 ORDER BY alarm_id`,
    [alarmType],
  );

/** The active list as a client sees it. */
export async function activeList(ctx: TestContext, token: string, siteIds: number[]) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/edge/alarms/active',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    payload: { siteIds },
  });
  return res.json() as { AlarmType: string; Value: number | null; SiteAlarmLogID: string }[];
}

/**
 * A rule's state as the evaluator's next pass would take it: its row, with its newest sample from the
 * position's list when that holds.
 */
export async function ruleState(db: Database, id: number) {
  const [r] = await findRules(db, [id]);
  const [{ unsaved }] = await db.query<{ unsaved: string }>(
    'SELECT unsaved FROM alarm_rule_cursor',
  );
  applyUnsaved(r, parseUnsaved(unsaved));
  return r.state;
}

/** A time this many seconds before now, ISO. */
export const secondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString();
