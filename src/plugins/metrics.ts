import type { FastifyRequest } from 'fastify';
import fastifyMetrics from 'fastify-metrics';
import * as promClient from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import { pendingCount } from '../alarms/notify/deliver.js';
import type { FastifyTypebox } from '../http.js';
import type { ServiceMetrics } from '../metrics.js';
import { pendingBuckets } from '../telemetry/rollups/refresh.js';

// The metrics of the app itself, in the registry the metrics listener serves (src/metrics.ts): the
// request histogram and the process's default metrics through fastify-metrics (its own /metrics
// route off: the public port serves none), and the gauges read when Prometheus scrapes.

/** The route label of a request no route serves (404, 405): one value, never the path asked. */
export const UNMATCHED = 'unmatched';
/** The rollup backlog is counted up to this many marks (a bounded scan), within this deadline. */
const BACKLOG_CAP = 100_000;
const BACKLOG_DEADLINE_MS = 1000;

/** The router's pattern (`/v1/config/meters/:id`), never the URL; requests no route serves share UNMATCHED. */
const routeLabel = (request: FastifyRequest): string =>
  request.is404 ? UNMATCHED : (request.routeOptions.url ?? UNMATCHED);

/** Registers the metrics on the app; before the other plugins, so that every answer (401, 429, 404) is timed. */
export async function registerMetrics(app: FastifyTypebox, metrics: ServiceMetrics): Promise<void> {
  const { registry } = metrics;
  // The package is CommonJS with an `exports.default`: ESM gets the whole module, the plugin is its default.
  await app.register(fastifyMetrics.default, {
    endpoint: null,
    promClient,
    defaultMetrics: { enabled: true, register: registry },
    routeMetrics: {
      enabled: { histogram: true, summary: false },
      // Unknown paths too (under UNMATCHED): a flood of 404s shows.
      registeredRoutesOnly: false,
      overrides: {
        histogram: {
          registers: [registry],
          help: "Time from a request's arrival to its answer, by method, route pattern and status",
        },
        // Off, but the plugin makes it anyway: in no registry (else prom-client's global one).
        summary: { registers: [] },
        labels: { getRouteLabel: routeLabel },
      },
    },
  });

  new Gauge({
    name: 'site_monitor_stream_subscribers',
    help: 'Live streams (GET /v1/stream) this instance serves',
    registers: [registry],
    collect() {
      this.set(app.stream.size);
    },
  });
  new Gauge({
    name: 'site_monitor_db_pool_waiting',
    help: 'Database calls waiting for a pooled connection (PostgreSQL; always 0 on the embedded database)',
    registers: [registry],
    collect() {
      this.set(app.db.poolWaiting?.() ?? 0);
    },
  });

  // Read from the pool when scraped (src/db/primary.ts): counters that only grow, the time of an
  // outage under way included, so that an alert sees it while it lasts.
  const primary = () => app.db.primary?.() ?? { failovers: 0, unwritableMs: 0 };
  let failoversShown = 0;
  new Counter({
    name: 'site_monitor_db_failovers_total',
    help: 'Times the database connections were lost and made again to another primary than before (PostgreSQL; 0 on the embedded database)',
    registers: [registry],
    collect() {
      const { failovers } = primary();
      this.inc(Math.max(0, failovers - failoversShown));
      failoversShown = Math.max(failoversShown, failovers);
    },
  });
  let unwritableShown = 0;
  new Counter({
    name: 'site_monitor_db_unwritable_seconds_total',
    help: 'Seconds the service had no writable primary: from a connection lost or refused to the next one that reached a primary (PostgreSQL)',
    registers: [registry],
    collect() {
      const seconds = primary().unwritableMs / 1000;
      this.inc(Math.max(0, seconds - unwritableShown));
      unwritableShown = Math.max(unwritableShown, seconds);
    },
  });

  // Counted at scrape time, one query at a time however many scrapes come; a scrape that meets a
  // slow or unreachable database reports the last count (and the failure is logged).
  let backlog = 0;
  let reading: Promise<number> | undefined;
  const readBacklog = () =>
    (reading ??= pendingBuckets(app.db.bounded(BACKLOG_DEADLINE_MS), BACKLOG_CAP)
      .then(
        (n) => (backlog = n),
        (err: unknown) => {
          app.log.warn(
            { err },
            'metrics: the rollup backlog could not be counted; last count kept',
          );
          return backlog;
        },
      )
      .finally(() => (reading = undefined)));
  new Gauge({
    name: 'site_monitor_rollup_pending_buckets',
    help: `15-minute buckets waiting for the rollup refresher (marks in rollup_dirty, counted up to ${BACKLOG_CAP})`,
    registers: [registry],
    async collect() {
      this.set(await readBacklog());
    },
  });
  let pendingNotifications = 0;
  new Gauge({
    name: 'site_monitor_notifications_pending',
    help: 'Alarm notifications recorded and not yet delivered or finally failed (counted up to 100000)',
    registers: [registry],
    async collect() {
      pendingNotifications = await pendingCount(app.db.bounded(BACKLOG_DEADLINE_MS)).catch(
        () => pendingNotifications,
      );
      this.set(pendingNotifications);
    },
  });
  let setAside = 0;
  new Gauge({
    name: 'site_monitor_rollup_set_aside_buckets',
    help: `15-minute buckets whose rollup failed and waits to be retried (counted up to ${BACKLOG_CAP}); summaries read them from the logs`,
    registers: [registry],
    async collect() {
      setAside = await pendingBuckets(app.db.bounded(BACKLOG_DEADLINE_MS), BACKLOG_CAP, {
        setAsideOnly: true,
      }).catch(() => setAside);
      this.set(setAside);
    },
  });
}
