import { INSERT_EVENTS } from '../stream/publish.js';
import { isoSql } from '../time.js';
import type { Job } from './jobs.js';
import type { TelemetryKind } from './kinds.js';

// The live stream's events of the upload statement (statement.ts), as CTEs of it: stored by the
// statement that stores the data, so an event exists exactly when its data is committed. They
// read the statement's own CTEs (`ir`, `wr`, `sr` of the readings, the logs' rows as stored).

/** A `reading` event for each row of `rows` (a reading that replaced a current value), in `order`. */
const readingEvents = (rows: string, order: string, of = '') => `er AS (${INSERT_EVENTS}
  SELECT ${of}site, 'reading', '{"siteId":' || ${of}site || ',"kind":"' || ${of}kind || '","record":' || ${of}rec || '}'
    FROM ${rows} ORDER BY ${order})`;

/**
 * A `reading` event for each reading that replaced a current value: each row the upsert `wr`
 * returned, with its input row of `ir`.
 */
export const READING_EVENTS = readingEvents('wr JOIN ir USING (kind, id)', 'ir.kind, ir.id', 'ir.');

/**
 * The same when a statement takes several readings of one equipment in order: an event for each
 * reading that replaced a current value (the rows of `sr`), each equipment's in that order.
 */
export const READING_EVENTS_IN_ORDER = readingEvents('sr', 'kind, id, n');

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
