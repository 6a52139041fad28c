import type { Database, Queryable } from '../../db/index.js';
import type { Logger } from '../../logger.js';
import { PeriodicTask } from '../../periodic-task.js';
import { raiseAlarm, resolveOwnAlarms } from './raise.js';

// Communication loss (contract 16): an active site that has communicated and then sends nothing for
// its CommLossMinutes (default 60, 0 off), counted by arrival (sites.last_communication, set by
// every upload, reading and MQTT message) from the later of that and the moment an instance last
// started serving, gets a site alarm COMM_LOSS (major, source "communication"). The check runs on
// every instance every CHECK_MS; an advisory lock lets one at a time work, and site_comm_loss
// remembers the silence already alarmed, so a silence raises one alarm. The site's next data
// resolves it: the rule evaluator sees the data's events (endCommunicationLoss), and the check itself
// resolves any it finds outlived (data whose events it missed).

export const COMM_LOSS = 'COMM_LOSS';
export const DEFAULT_COMM_LOSS_MINUTES = 60;
/** How often each instance checks: an alarm comes at most this long (plus a check's time) after its threshold. */
const CHECK_MS = 15_000;
/** Two-key advisory lock: this number, and the schema (test suites share one PostgreSQL). */
const LOCK_KEY = 7317;
/** Sites alarmed per check at most (the next check takes the rest). */
const MAX_PER_CHECK = 1000;

const MINUTES = `COALESCE(s.comm_loss_minutes, ${DEFAULT_COMM_LOSS_MINUTES})`;

/** Records that an instance starts serving now: silence before it is not counted. */
export async function noteServiceStart(db: Queryable): Promise<void> {
  await db.query(
    `INSERT INTO service_starts (started_at) VALUES (now())
     ON CONFLICT (only_row) DO UPDATE SET started_at = GREATEST(service_starts.started_at, EXCLUDED.started_at)`,
  );
}

/** One check: raises the alarms of sites silent past their threshold, resolves those outlived. */
export async function checkCommunicationLoss(
  db: Database,
): Promise<{ raised: number; resolved: number; skipped?: true }> {
  return db.transaction(async (tx) => {
    if (db.kind === 'postgres') {
      const [{ locked }] = await tx.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_xact_lock(${LOCK_KEY}, hashtext(current_schema())) AS locked`,
      );
      if (!locked) return { raised: 0, resolved: 0, skipped: true };
    }
    const silent = await tx.query<{ site_id: number; since: Date; minutes: number; due: Date }>(
      `SELECT s.site_id, s.last_communication AS since, ${MINUTES} AS minutes,
              GREATEST(s.last_communication, st.started_at) + ${MINUTES} * interval '1 minute' AS due
         FROM sites s
        CROSS JOIN (SELECT COALESCE(max(started_at), '-infinity') AS started_at FROM service_starts) st
         LEFT JOIN site_comm_loss c ON c.site_id = s.site_id
        WHERE s.active AND s.last_communication IS NOT NULL AND ${MINUTES} > 0
          AND GREATEST(s.last_communication, st.started_at) + ${MINUTES} * interval '1 minute' <= now()
          AND (c.silent_since IS NULL OR c.silent_since < s.last_communication)
        ORDER BY s.site_id LIMIT ${MAX_PER_CHECK}`,
    );
    for (const s of silent) {
      const { record } = await raiseAlarm(
        tx,
        { siteId: s.site_id, typeId: null, equipmentId: null, alarmType: COMM_LOSS },
        {
          severity: 'major',
          message: `no data for ${s.minutes} minutes (last communication ${s.since.toISOString()})`,
          value: null,
          at: s.due.getTime(),
        },
        { source: 'communication', by: 'communication' },
      );
      // The silence as stored (microseconds: a JavaScript Date would cut them).
      await tx.query(
        `INSERT INTO site_comm_loss (site_id, silent_since, alarm_id)
         SELECT site_id, last_communication, $2::int8 FROM sites WHERE site_id = $1
         ON CONFLICT (site_id) DO UPDATE SET silent_since = EXCLUDED.silent_since, alarm_id = EXCLUDED.alarm_id`,
        [s.site_id, record.SiteAlarmLogID],
      );
    }
    const outlived = await tx.query<{ site_id: number }>(
      `SELECT c.site_id FROM site_comm_loss c
         JOIN sites s ON s.site_id = c.site_id AND s.last_communication > c.silent_since
         JOIN site_alarms a ON a.alarm_id = c.alarm_id AND a.resolved_at IS NULL AND a.source = 'communication'
        ORDER BY 1`,
    );
    return {
      raised: silent.length,
      resolved: await endCommunicationLoss(
        tx,
        outlived.map((o) => o.site_id),
      ),
    };
  });
}

/** Data from these sites ends their communication loss: the open alarm the check raised is resolved. */
export async function endCommunicationLoss(
  tx: Queryable,
  sites: Iterable<number>,
): Promise<number> {
  const ids = [...sites];
  if (!ids.length) return 0;
  const rows = await tx.query<{ site_id: number }>(
    `SELECT s.site_id FROM unnest($1::int[]) AS s(site_id)
      WHERE EXISTS (SELECT 1 FROM site_alarms a WHERE a.site_id = s.site_id AND a.resolved_at IS NULL
                       AND a.equipment_type_id IS NULL AND a.alarm_type = '${COMM_LOSS}' AND a.source = 'communication')
      ORDER BY 1`,
    [ids],
  );
  let n = 0;
  for (const { site_id } of rows)
    n += (
      await resolveOwnAlarms(
        tx,
        site_id,
        [{ typeId: null, equipmentId: null, alarmType: COMM_LOSS }],
        'communication',
        'communication',
      )
    ).length;
  return n;
}

/**
 * The check, on every instance (one works at a time). It checks only once this instance's start is
 * noted (a start whose database did not answer is noted before the first check).
 */
export class CommLossMonitor extends PeriodicTask {
  private noted = false;

  constructor(
    private readonly db: Database,
    log: Logger,
    opts: { intervalMs?: number; onChange?: () => void } = {},
  ) {
    super(
      async () => {
        if (!this.noted) await this.noteStart();
        const { raised, resolved } = await checkCommunicationLoss(db);
        if (raised || resolved) {
          log.info({ raised, resolved }, 'communication loss: alarms raised or resolved');
          opts.onChange?.();
        }
      },
      {
        intervalMs: opts.intervalMs ?? CHECK_MS,
        onError: (err) =>
          log.warn({ err }, 'communication loss check failed; the next one retries'),
      },
    );
  }

  /** Records this instance's start (silence before it is not counted). */
  async noteStart(): Promise<void> {
    await noteServiceStart(this.db);
    this.noted = true;
  }
}
