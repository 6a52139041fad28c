// Which primary the pool's connections reach, and how long there was none that wrote: the figures
// behind site_monitor_db_failovers_total and site_monitor_db_unwritable_seconds_total
// (docs/deployment.md#what-an-operator-sees). Every new connection reads, in the statement that also
// sets its session up, whether its server is a primary and which one (PRIMARY_PROBE): the address and
// port the server listens on and its postmaster's start time, so that another node, or the same node
// restarted, is another primary. Through HAProxy the address is the node's own, not HAProxy's.
//
// The time without a writable primary runs from the first sign of its loss the pool sees (a
// connection it held broke, or a new one could not be made or landed on a standby and was refused a
// write) to the first new connection that lands on a primary, or the first call that succeeds on a
// connection to the current primary (a single failure to connect, with the primary well, is then
// counted only until the next call's answer).

/** Sets the session up and says which server it reached: one statement, the first on each connection. */
export const PRIMARY_PROBE = `SELECT set_config('jit', 'off', false) AS jit, pg_is_in_recovery() AS standby,
  coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port(), 0)::text || ' ' ||
  pg_postmaster_start_time()::text AS server`;

export interface PrimaryFigures {
  /** Connections lost and made again to another primary than the one before (since the start). */
  failovers: number;
  /** Milliseconds without a writable primary, the outage under way included (since the start). */
  unwritableMs: number;
}

export class PrimaryWatch {
  private current: string | undefined;
  private lostAt: number | undefined;
  private pastMs = 0;
  private failovers = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A sign that there may be no writable primary: a connection could not be made (no `server`), or
   * one broke. A connection to an earlier primary that breaks once another is current says nothing.
   */
  lost(server?: string): void {
    if (server !== undefined && this.current !== undefined && server !== this.current) return;
    this.lostAt ??= this.now();
  }

  /** A new connection reached `server` (PRIMARY_PROBE's text); `standby` when it is in recovery. */
  reached(server: string, standby: boolean): void {
    if (standby) return;
    if (this.current !== undefined && this.current !== server) this.failovers++;
    this.current = server;
    this.writable();
  }

  /** A call succeeded on a connection to `server` (undefined: not known); ends an outage when that is the current primary. */
  succeeded(server: string | undefined): void {
    if (this.lostAt !== undefined && server !== undefined && server === this.current)
      this.writable();
  }

  private writable(): void {
    if (this.lostAt === undefined) return;
    this.pastMs += Math.max(0, this.now() - this.lostAt);
    this.lostAt = undefined;
  }

  figures(): PrimaryFigures {
    const ongoing = this.lostAt === undefined ? 0 : Math.max(0, this.now() - this.lostAt);
    return { failovers: this.failovers, unwritableMs: this.pastMs + ongoing };
  }
}
