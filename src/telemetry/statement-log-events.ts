import { INSERT_EVENTS } from '../stream/publish.js';
import { isoSql } from '../time.js';
import type { Job } from './jobs.js';
import type { TelemetryKind } from './kinds.js';

// The live stream's `logs` events of the upload statement's logs part (statement-logs.ts): stored
// by the statement that stores the data, so an event exists exactly when its data is committed.

/**
 * When the logs are upserted: a `logs` event per upload (job), site and kind, over the log rows
 * stored (`stored` yields id, ts, job and site).
 */
export const logEvents = (
  name: string,
  kind: TelemetryKind,
  stored: string,
) => `${name} AS (${INSERT_EVENTS}
  SELECT site, 'logs', json_build_object('siteId', site, 'kind', '${kind}', 'ids', array_agg(DISTINCT id ORDER BY id),
         'from', ${isoSql('min(ts)')}, 'to', ${isoSql('max(ts)')}, 'count', count(*))::text
    FROM ${stored} GROUP BY job, site ORDER BY job, site)`;

interface LogGroup {
  site: number;
  kind: TelemetryKind;
  ids: Set<number>;
  from: number;
  to: number;
  count: number;
}

/**
 * The `logs` events of a statement that writes logs with a plain INSERT, where every entry is
 * stored or none: made here, the same as logEvents makes them, and stored by the CTE it returns.
 */
export function insertedLogEvents(jobs: Job[]) {
  const sites: number[] = [];
  const data: string[] = [];
  for (const job of jobs) {
    if (job.role !== 'log') continue;
    // By kind, then site (number keys: a 1,000-record batch builds no key strings); `made` keeps
    // the order in which each kind and site first appeared.
    const made: LogGroup[] = [];
    const groups = new Map<TelemetryKind, Map<number, LogGroup>>();
    for (const e of job.entries) {
      let bySite = groups.get(e.kind);
      if (!bySite) groups.set(e.kind, (bySite = new Map()));
      const g = bySite.get(e.site!);
      if (!g) {
        const group = {
          site: e.site!,
          kind: e.kind,
          ids: new Set([e.id]),
          from: e.ts,
          to: e.ts,
          count: 1,
        };
        bySite.set(e.site!, group);
        made.push(group);
      } else {
        g.ids.add(e.id);
        g.from = Math.min(g.from, e.ts);
        g.to = Math.max(g.to, e.ts);
        g.count++;
      }
    }
    for (const g of made.sort((a, b) => a.site - b.site)) {
      sites.push(g.site);
      const ids = [...g.ids].sort((a, b) => a - b);
      data.push(
        JSON.stringify({
          siteId: g.site,
          kind: g.kind,
          ids,
          from: new Date(g.from).toISOString(),
          to: new Date(g.to).toISOString(),
          count: g.count,
        }),
      );
    }
  }
  return {
    sites,
    data,
    cte: (siteList: string, dataList: string) =>
      `el AS (${INSERT_EVENTS} SELECT site, 'logs', data FROM unnest(${siteList}, ${dataList}) AS u(site, data))`,
  };
}
