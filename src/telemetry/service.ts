import type { Access } from '../auth/access.js';
import type { Settings } from '../settings.js';
import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';
import { EquipmentDirectory } from './equipment.js';
import { makeJob, type Counts, type Job, type Role, type Source } from './jobs.js';
import type { Entry, TelemetryKind } from './kinds.js';
import { Partitions } from './partitions.js';
import { RollupRefresher } from './rollups/refresher.js';
import { readHorizon, UploadHorizon } from './retention/horizon.js';
import { runRetention } from './retention/pass.js';
import { describeRetention } from './retention/report.js';
import { RetentionScheduler } from './retention/scheduler.js';
import { pruneOutcomes } from '../db/outcome.js';
import { PeriodicTask } from '../periodic-task.js';
import { describeArchive } from './archive/report.js';
import { runArchive } from './archive/pass.js';

/** How often the outcomes older than OUTCOME_KEEP are removed. */
const OUTCOME_PRUNE_MS = 60_000;
import { TelemetryWriter } from './writer.js';

// The upload path of one instance: the partitions it writes into, the equipment directory that
// checks every entry's site, the group-commit writer, and the rollup refresher and retention behind
// it. Every way records arrive (the upload routes; gateways over other transports) stores them
// through `store`.

export interface TelemetryServiceOptions {
  /** Follows every commit (the live stream looks for new events). */
  onCommit: () => void;
  /**
   * Follows every commit of uploads, before onCommit, with their jobs and the id of the transaction
   * that stored them (when known; the rule evaluator's).
   */
  onJobs?: (jobs: Job[], xid: string | undefined) => void;
  log: Logger;
  /** Records committed, per kind, type and source (the ingest counter); called once per commit and kind. */
  onStored?: (stored: { kind: TelemetryKind; type: Role; source: Source; count: number }) => void;
  /** Equipment-days an archive pass archived, or that failed (the archive metric). */
  onArchived?: (kind: TelemetryKind, result: 'archived' | 'failed', count: number) => void;
}

export class TelemetryService {
  readonly writer: TelemetryWriter;
  readonly directory: EquipmentDirectory;
  private readonly refresher: RollupRefresher | undefined;
  /** The hourly retention pass; none with RETENTION_DAYS=0. */
  readonly retention: RetentionScheduler | undefined;
  /** The hourly archive pass; none with ARCHIVE_AFTER_DAYS=0. */
  readonly archive: PeriodicTask | undefined;
  private readonly horizon: UploadHorizon;
  /** Removes the outcomes uploads recorded (src/db/outcome.ts) once no request can need them. */
  private readonly outcomes: PeriodicTask;

  private constructor(
    db: Database,
    partitions: Partitions,
    settings: Settings,
    horizon: number | undefined,
    opts: TelemetryServiceOptions,
  ) {
    const onStored = opts.onStored;
    this.writer = new TelemetryWriter(db, partitions, {
      group: settings.GROUP_COMMIT,
      // Of the pool's 10 connections, uploads take at most 5: those that write the same log tables
      // 3 (while one waits for its commit's flush, the others go on), readings 2 (their statements
      // at one busy site wait for each other's row locks: a third lost 4 % in an A/B).
      maxInFlight: db.kind === 'pglite' ? 1 : 5,
      maxPerLane: db.kind === 'pglite' ? 1 : 3,
      maxReadings: db.kind === 'pglite' ? 1 : 2,
      onCommit: opts.onCommit,
      onJobs: opts.onJobs,
      onStored: onStored
        ? (job, stored) => {
            for (const [kind, count] of Object.entries(stored) as [TelemetryKind, number][])
              if (count) onStored({ kind, type: job.role, source: job.source, count });
          }
        : undefined,
    });
    this.directory = new EquipmentDirectory(db, settings.EQUIPMENT_CACHE_MS);
    this.refresher =
      settings.ROLLUP_REFRESH_MS > 0
        ? new RollupRefresher(db.bounded(settings.WRITE_TIMEOUT_MS), {
            intervalMs: settings.ROLLUP_REFRESH_MS,
            batch: settings.ROLLUP_BATCH,
            busyGraceMs: settings.ROLLUP_BUSY_GRACE_MS,
            busy: () => this.writer.busy(),
            onError: (err) =>
              opts.log.warn(
                { err },
                'rollup refresh failed; stale buckets are read from the logs meanwhile',
              ),
            // Logged the first time only: a bucket that keeps failing is retried with a growing wait.
            onSetAside: (mark, err) => {
              if (mark.failures === 1)
                opts.log.warn(
                  { err, rollup: mark },
                  'a bucket could not be rolled up; set aside and retried later (summaries read it from the logs meanwhile)',
                );
            },
          })
        : undefined;
    this.horizon = new UploadHorizon(db, settings.RETENTION_DAYS, horizon);
    this.outcomes = new PeriodicTask(() => pruneOutcomes(db.bounded(settings.WRITE_TIMEOUT_MS)), {
      intervalMs: OUTCOME_PRUNE_MS,
      onError: (err) =>
        opts.log.warn({ err }, 'pruning upload outcomes failed; the next run retries'),
    });
    // A pass's steps take the time they need (each statement bounded by the server's statement_timeout,
    // each lock wait by the pass itself), so it does not use the requests' deadlines.
    const unbounded = db.bounded(Infinity);
    this.retention =
      settings.RETENTION_DAYS > 0
        ? new RetentionScheduler(
            (signal) => runRetention(unbounded, { days: settings.RETENTION_DAYS, signal }),
            {
              intervalMs: settings.RETENTION_INTERVAL_MS,
              firstDelayMs: Math.min(settings.RETENTION_INTERVAL_MS, 60_000),
              onReport: (report) => {
                if (report.ran) this.horizon.learn(report.after);
                // Quiet when there was nothing to do (every hour but about one a month).
                if (report.before !== report.after || report.skipped)
                  opts.log.info({ retention: report }, describeRetention(report).join('; '));
              },
              onError: (err) =>
                opts.log.warn({ err }, 'retention pass failed; the next one retries'),
            },
          )
        : undefined;
    // Logged once per equipment-day and process: a day that keeps failing is retried by each pass.
    const failedBefore = new Set<string>();
    this.archive =
      settings.ARCHIVE_AFTER_DAYS > 0
        ? new PeriodicTask(
            async (signal) => {
              const report = await runArchive(unbounded, {
                days: settings.ARCHIVE_AFTER_DAYS,
                signal,
                onFailure: (f, err) => {
                  const key = `${f.kind}:${f.id}:${f.day}`;
                  if (failedBefore.has(key)) return;
                  failedBefore.add(key);
                  opts.log.warn(
                    {
                      err,
                      archive: { kind: f.kind, id: f.id, day: new Date(f.day).toISOString() },
                    },
                    'a day of logs could not be archived; set aside, the next pass tries again (it stays rows meanwhile)',
                  );
                },
              });
              for (const k of report.kinds)
                if (k.days) opts.onArchived?.(k.kind, 'archived', k.days);
              for (const f of report.failed) opts.onArchived?.(f.kind, 'failed', 1);
              if (report.kinds.some((k) => k.days) || report.failed.length)
                opts.log.info({ archive: report }, describeArchive(report).join('; '));
            },
            {
              intervalMs: settings.ARCHIVE_INTERVAL_MS,
              firstDelayMs: Math.min(settings.ARCHIVE_INTERVAL_MS, 60_000),
              onError: (err) => opts.log.warn({ err }, 'archive pass failed; the next one retries'),
            },
          )
        : undefined;
  }

  /** `db` bounds every request's call (the app's bounded view); `onCommit` follows every commit. */
  static async create(
    db: Database,
    settings: Settings,
    opts: TelemetryServiceOptions,
  ): Promise<TelemetryService> {
    const partitions = new Partitions(db);
    await partitions.cover(Date.now());
    return new TelemetryService(db, partitions, settings, await readHorizon(db), opts);
  }

  /** Starts the background rollup refresh and retention (when configured). */
  start(): void {
    this.refresher?.start();
    this.retention?.start();
    this.archive?.start();
    this.outcomes.start();
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
    if (role === 'log') await this.horizon.check(entries, pathOf);
    const sites = await this.directory.resolve(access, entries, pathOf, deadline);
    return this.writer.submit(makeJob(role, entries, sites, source), deadline);
  }

  /** Writes already accepted finish (their requests are answered); the refresher and retention stop. */
  async close(): Promise<void> {
    await Promise.all([
      this.writer.idle(),
      this.refresher?.stop(),
      this.retention?.stop(),
      this.archive?.stop(),
      this.outcomes.stop(),
    ]);
  }
}
