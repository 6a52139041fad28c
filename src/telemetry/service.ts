import type { Access } from '../auth/access.js';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';
import { EquipmentDirectory } from './equipment.js';
import { makeJob, type Counts, type Role, type Source } from './jobs.js';
import type { Entry, TelemetryKind } from './kinds.js';
import { Partitions } from './partitions.js';
import { RollupRefresher } from './rollups/refresh.js';
import { TelemetryWriter } from './writer.js';

// The upload path of one instance: the partitions it writes into, the equipment directory that
// checks every entry's site, the group-commit writer, and the rollup refresher behind it. Every way
// records arrive (the upload routes; gateways over other transports) stores them through `store`.

export interface TelemetryServiceOptions {
  /** Follows every commit (the live stream looks for new events). */
  onCommit: () => void;
  log: Logger;
  /** Records committed, per kind, type and source (the ingest counter); called once per commit and kind. */
  onStored?: (stored: { kind: TelemetryKind; type: Role; source: Source; count: number }) => void;
}

export class TelemetryService {
  readonly writer: TelemetryWriter;
  readonly directory: EquipmentDirectory;
  private readonly refresher: RollupRefresher | undefined;

  private constructor(
    db: Database,
    partitions: Partitions,
    config: Config,
    opts: TelemetryServiceOptions,
  ) {
    const onStored = opts.onStored;
    this.writer = new TelemetryWriter(db, partitions, {
      group: config.GROUP_COMMIT,
      // Of the pool's 10 connections, uploads take at most 4, and those that write the same tables 2.
      maxInFlight: db.kind === 'pglite' ? 1 : 4,
      maxPerLane: db.kind === 'pglite' ? 1 : 2,
      onCommit: opts.onCommit,
      onStored: onStored
        ? (job, stored) => {
            for (const [kind, count] of Object.entries(stored) as [TelemetryKind, number][])
              if (count) onStored({ kind, type: job.role, source: job.source, count });
          }
        : undefined,
    });
    this.directory = new EquipmentDirectory(db, config.EQUIPMENT_CACHE_MS);
    this.refresher =
      config.ROLLUP_REFRESH_MS > 0
        ? new RollupRefresher(db.bounded(config.WRITE_TIMEOUT_MS), {
            intervalMs: config.ROLLUP_REFRESH_MS,
            batch: config.ROLLUP_BATCH,
            onError: (err) =>
              opts.log.warn(
                { err },
                'rollup refresh failed; stale buckets are read from the logs meanwhile',
              ),
          })
        : undefined;
  }

  /** `db` bounds every request's call (the app's bounded view); `onCommit` follows every commit. */
  static async create(
    db: Database,
    config: Config,
    opts: TelemetryServiceOptions,
  ): Promise<TelemetryService> {
    const partitions = new Partitions(db);
    await partitions.cover(Date.now());
    return new TelemetryService(db, partitions, config, opts);
  }

  /** Starts the background rollup refresh (when configured). */
  start(): void {
    this.refresher?.start();
  }

  /**
   * Stores the entries of one upload, all or nothing: 404 when any equipment does not exist, 403
   * when any is out of the client's reach, else written and committed with the group. `pathOf`
   * names an entry's id field in error details; everything ends by `deadline` (epoch ms). `source`
   * says how they arrived (the ingest metrics count by it).
   */
  async store(
    access: Access,
    role: Role,
    entries: Entry[],
    pathOf: (e: Entry) => string,
    deadline: number,
    source: Source = 'http',
  ): Promise<Counts> {
    const sites = await this.directory.resolve(access, entries, pathOf, deadline);
    return this.writer.submit(makeJob(role, entries, sites, source), deadline);
  }

  /** Writes already accepted finish (their requests are answered) and the refresher stops. */
  async close(): Promise<void> {
    await Promise.all([this.writer.idle(), this.refresher?.stop()]);
  }
}
