import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';

// Exactly one instance at a time is the Sparkplug host: the one named by the lease row of the host
// id. The holder renews it every RENEW_MS for TTL_MS; another instance takes it only once it has
// expired, so a holder that stops (or loses the database) is replaced within TTL_MS + RENEW_MS
// (8 s). A holder that cannot renew steps down before its lease can have expired, so two hosts
// never overlap. A holder that shuts down releases the lease at once.

const TTL_MS = 6000;
const RENEW_MS = 2000;

export interface LeaseOptions {
  log: Logger;
  /** The lease was taken (true) or lost (false). */
  onChange: (held: boolean) => void;
  ttlMs?: number;
  renewMs?: number;
}

export class HostLease {
  private timer: NodeJS.Timeout | undefined;
  private held = false;
  /** Epoch ms until which the lease is surely ours (the start of the last renewal plus the TTL). */
  private heldUntil = 0;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly ttlMs: number;
  private readonly renewMs: number;

  constructor(
    private readonly db: Database,
    private readonly hostId: string,
    private readonly holder: string,
    private readonly o: LeaseOptions,
  ) {
    this.ttlMs = o.ttlMs ?? TTL_MS;
    this.renewMs = o.renewMs ?? RENEW_MS;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.renew().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, this.renewMs).unref();
      });
    };
    tick();
  }

  private async renew(): Promise<void> {
    const started = Date.now();
    let mine: boolean;
    try {
      const rows = await this.db.bounded(this.renewMs).query<{ holder: string }>(
        `INSERT INTO mqtt_host_lease (host_id, holder, expires_at)
           VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (host_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
           WHERE mqtt_host_lease.holder = EXCLUDED.holder OR mqtt_host_lease.expires_at < now()
         RETURNING holder`,
        [this.hostId, this.holder, this.ttlMs],
      );
      mine = rows.length === 1;
      if (mine) this.heldUntil = started + this.ttlMs;
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'mqtt: renewing the host lease failed');
      // Still ours for a while: step down only before it can have expired.
      mine = this.held && Date.now() < this.heldUntil - this.renewMs;
    }
    if (this.stopped) return;
    if (mine !== this.held) {
      this.held = mine;
      this.o.onChange(mine);
    }
  }

  /** Stops renewing; `beforeRelease` runs (the host steps down) before the lease is given up. */
  async stop(beforeRelease?: () => Promise<void>): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await beforeRelease?.();
    if (!this.held) return;
    this.held = false;
    await this.db
      .bounded(this.renewMs)
      .query(`DELETE FROM mqtt_host_lease WHERE host_id = $1 AND holder = $2`, [
        this.hostId,
        this.holder,
      ])
      .catch(() => {});
  }
}
