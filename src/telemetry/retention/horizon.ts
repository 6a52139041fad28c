import type { Queryable } from '../../db/index.js';
import { invalidField } from '../../errors.js';
import type { Entry } from '../kinds.js';

// The retention horizon (contract 15): every log before it has been removed; its rollups stay. It only
// moves forward, a whole UTC month at a time, and is kept in service_settings so that every instance,
// the CLI and the summary SQL read the same one. Before any pass there is none: nothing was removed.

const KEY = 'telemetry_horizon';

/** The horizon as an SQL expression (timestamptz, '-infinity' when no log was ever removed). */
export const HORIZON_SQL = `coalesce((SELECT value::timestamptz FROM service_settings WHERE key = '${KEY}'), '-infinity'::timestamptz)`;

const DAY = 86_400_000;

/** Start of the UTC month holding t (epoch ms). */
export const monthStart = (t: number) => {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
/** Start of the UTC month after the one starting at m. */
export const nextMonth = (m: number) => {
  const d = new Date(m);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};
/** 'YYYY-MM' of the UTC month holding t. */
export const monthName = (t: number) => new Date(t).toISOString().slice(0, 7);

/**
 * Where retention of `days` wants the horizon at `now`: the end of the latest UTC month that ended
 * more than `days` days ago (every month ending at or before it is removed).
 */
export const targetHorizon = (now: number, days: number) => monthStart(now - days * DAY - 1);

export async function readHorizon(db: Queryable): Promise<number | undefined> {
  const [row] = await db.query<{ ms: number | null }>(
    `SELECT date_part('epoch', value::timestamptz) * 1000 AS ms FROM service_settings WHERE key = '${KEY}'`,
  );
  return row?.ms == null ? undefined : Math.round(Number(row.ms));
}

export async function writeHorizon(db: Queryable, t: number): Promise<void> {
  await db.query(
    `INSERT INTO service_settings (key, value) VALUES ('${KEY}', $1)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [new Date(t).toISOString()],
  );
}

/** How long an instance trusts the horizon it read (another instance, or the CLI, may move it). */
const REREAD_MS = 60_000;

/**
 * Refuses logs older than the horizon (400 naming the entry's timestamp): their month is gone, and
 * storing them would either fail (no partition is left for them) or, in the archive, rebuild a
 * quarter's rollup from those few logs alone. Reads the horizon at most once a minute, and again
 * when an entry is older than where it may be by now (retention's target for this instance's setting).
 */
export class UploadHorizon {
  private readAt: number;

  constructor(
    private readonly db: Queryable,
    private readonly days: number,
    /** The horizon as last read (epoch ms); undefined: none. */
    private known: number | undefined,
  ) {
    this.readAt = Date.now();
  }

  /** After this instance's own pass. */
  learn(horizon: number | undefined): void {
    this.known = horizon;
    this.readAt = Date.now();
  }

  async check(entries: Entry[], pathOf: (e: Entry) => string): Promise<void> {
    const now = Date.now();
    let oldest = Infinity;
    for (const e of entries) if (e.ts < oldest) oldest = e.ts;
    const stale =
      now - this.readAt > REREAD_MS ||
      (this.days > 0 &&
        oldest < targetHorizon(now, this.days) &&
        oldest >= (this.known ?? -Infinity));
    if (stale) this.learn(await readHorizon(this.db));
    const horizon = this.known;
    if (horizon === undefined || oldest >= horizon) return;
    const first = entries.find((e) => e.ts < horizon)!;
    throw invalidField(
      pathOf(first).replace(/[^/]*$/, 'timestamp'),
      `is before ${new Date(horizon).toISOString()}: the logs of older months have been removed (retention)`,
    );
  }
}
