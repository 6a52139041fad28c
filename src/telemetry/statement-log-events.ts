import { INSERT_EVENTS } from '../stream/publish.js';
import { isoSql } from '../time.js';
import type { Job } from './jobs.js';
import type { Entry, TelemetryKind } from './kinds.js';

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

export interface LogGroup {
  site: number;
  kind: TelemetryKind;
  ids: Set<number>;
  from: number;
  to: number;
  count: number;
  /** With `withEntries`: the group's entries by equipment id, in the job's order. */
  entries?: Map<number, Entry[]>;
}

/**
 * The `logs` events of one log job, as insertedLogEvents stores them: a group per kind and site (in
 * site order), with its event data. `withEntries` keeps each group's entries too (the rule
 * evaluator's samples of a committed upload, src/alarms/rules/recent.ts).
 */
export function jobLogGroups(job: Job, withEntries = false): { group: LogGroup; data: string }[] {
  // By kind, then site (number keys: a 1,000-record batch builds no key strings); `made` keeps
  // the order in which each kind and site first appeared.
  const made: LogGroup[] = [];
  const groups = new Map<TelemetryKind, Map<number, LogGroup>>();
  for (const e of job.entries) {
    let bySite = groups.get(e.kind);
    if (!bySite) groups.set(e.kind, (bySite = new Map()));
    let g = bySite.get(e.site!);
    if (!g) {
      g = {
        site: e.site!,
        kind: e.kind,
        ids: new Set([e.id]),
        from: e.ts,
        to: e.ts,
        count: 1,
      };
      if (withEntries) g.entries = new Map();
      bySite.set(e.site!, g);
      made.push(g);
    } else {
      g.ids.add(e.id);
      g.from = Math.min(g.from, e.ts);
      g.to = Math.max(g.to, e.ts);
      g.count++;
    }
    if (g.entries) {
      const of = g.entries.get(e.id);
      if (of) of.push(e);
      else g.entries.set(e.id, [e]);
    }
  }
  return made
    .sort((a, b) => a.site - b.site)
    .map((g) => ({
      group: g,
      data: JSON.stringify({
        siteId: g.site,
        kind: g.kind,
        ids: [...g.ids].sort((a, b) => a - b),
        from: new Date(g.from).toISOString(),
        to: new Date(g.to).toISOString(),
        count: g.count,
      }),
    }));
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
    for (const g of jobLogGroups(job)) {
      sites.push(g.group.site);
      data.push(g.data);
    }
  }
  return {
    sites,
    data,
    cte: (siteList: string, dataList: string) =>
      `el AS (${INSERT_EVENTS} SELECT site, 'logs', data FROM unnest(${siteList}, ${dataList}) AS u(site, data))`,
  };
}
