import type { Queryable } from '../../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../../equipment.js';
import type { Page } from '../../stream/events.js';
import { columnOf } from './definition.js';
import { KINDS, type Entry } from '../../telemetry/kinds.js';
import type { RecentLogs } from './recent.js';
import { readLogSamples, type RuleWithState } from './repository.js';

// What a pass of the evaluator (evaluator.ts) evaluates: the equipment its events name, and each
// rule's samples in the order they were stored.

/** Log samples per rule and pass; more are evaluated by the next pass. */
const SAMPLES_PER_RULE = 20_000;

/**
 * What one event stored of an equipment: a range of its logs (epoch ms; the event's transaction and
 * text, `xid` and `data`, name it in RecentLogs), or one reading.
 */
export type Stored =
  { logs: [number, number]; xid?: number; data?: string } | { reading: Record<string, unknown> };

export interface Work {
  /** Equipment with stored data: `kind:id` -> what each event stored of it, in stream order. */
  equipment: Map<string, { kind: TelemetryKind; id: number; stored: Stored[] }>;
  /** Sites with stored data (communication loss ends). */
  sites: Set<number>;
}

export function collect(rows: Page['rows']): Work {
  const work: Work = { equipment: new Map(), sites: new Set() };
  const add = (kind: TelemetryKind, id: number, stored: Stored) => {
    const key = `${kind}:${id}`;
    const e = work.equipment.get(key);
    if (e) e.stored.push(stored);
    else work.equipment.set(key, { kind, id, stored: [stored] });
  };
  for (const row of rows) {
    if (row.type === 'logs') {
      const d = JSON.parse(row.data) as {
        kind: TelemetryKind;
        ids: number[];
        from: string;
        to: string;
      };
      const logs: [number, number] = [Date.parse(d.from), Date.parse(d.to)];
      for (const id of d.ids) add(d.kind, id, { logs, xid: row.xid, data: row.data });
      work.sites.add(row.siteId);
    } else if (row.type === 'reading') {
      const d = JSON.parse(row.data) as { kind: TelemetryKind; record: Record<string, unknown> };
      add(d.kind, d.record[EQUIPMENT[d.kind].idField] as number, { reading: d.record });
      work.sites.add(row.siteId);
    }
  }
  return work;
}

export interface Sample {
  ts: number;
  value: number;
}

/**
 * Each rule's samples, in the order they were stored: event by event (stream order), the logs of an
 * event in time order (those this instance has just stored from `recent`, when it holds that event's
 * transaction and text, else read from its log table: its range, not older than the rule's newest
 * sample).
 */
export async function gatherSamples(
  tx: Queryable,
  rules: RuleWithState[],
  work: Work,
  now: number,
  recent?: RecentLogs,
): Promise<Sample[][]> {
  const stored = rules.map(
    (r) => work.equipment.get(`${r.rule.kind}:${r.rule.equipmentId}`)?.stored ?? [],
  );
  // Per rule and event: its samples, filled below.
  const parts: Sample[][][] = stored.map((events) => events.map(() => []));
  for (const kind of TELEMETRY_KINDS) {
    const wanted: {
      at: [number, number];
      equipmentId: number;
      column: string;
      from: number;
      to: number;
      after: number | null;
    }[] = [];
    rules.forEach((r, i) => {
      if (r.rule.kind !== kind) return;
      stored[i].forEach((e, j) => {
        if (!('logs' in e) || e.logs[0] > now) return;
        const known =
          e.data === undefined || e.xid === undefined
            ? undefined
            : recent?.entriesOf(e.xid, e.data, r.rule.equipmentId);
        if (known) {
          parts[i][j] = fromEntries(known, fieldIndex(kind, r.rule.field), r.state.lastTs, now);
          return;
        }
        wanted.push({
          at: [i, j],
          equipmentId: r.rule.equipmentId,
          column: columnOf(kind, r.rule.field),
          from: e.logs[0],
          to: Math.min(e.logs[1], now),
          after: r.state.lastTs,
        });
      });
    });
    for (const row of await readLogSamples(tx, kind, wanted, SAMPLES_PER_RULE)) {
      if (row.v === null) continue;
      const [i, j] = wanted[row.i - 1].at;
      parts[i][j].push({ ts: row.ts.getTime(), value: row.v });
    }
  }
  return rules.map((r, i) =>
    stored[i].flatMap((e, j) => {
      if ('logs' in e) return parts[i][j];
      const v = e.reading[r.rule.field];
      return typeof v === 'number'
        ? [{ ts: Date.parse(e.reading.timestamp as string), value: v }]
        : [];
    }),
  );
}

const fieldIndex = (kind: TelemetryKind, field: string) =>
  KINDS[kind].fields.findIndex((f) => f.name === field);

/**
 * The samples of an upload's entries of one equipment, as readLogSamples reads them back: in time
 * order, from `after` to `now`.
 */
function fromEntries(entries: Entry[], field: number, after: number | null, now: number): Sample[] {
  const out: Sample[] = [];
  for (const e of entries) {
    const v = e.values[field];
    if (typeof v === 'number' && e.ts <= now && (after === null || e.ts >= after))
      out.push({ ts: e.ts, value: v });
  }
  return out.sort((a, b) => a.ts - b.ts);
}
