import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import type { Values } from '../../export/records.js';
import { parseRange } from '../../time.js';
import type { Download } from './index.js';

// Plot values (contract 13): [start, end) cut into `intervals` equal parts; of each part its first,
// last, lowest and highest sample (stored samples, each once). A part is covered by the coarsest
// clean rollups that nest in it (days, hours, quarters: each carries its first, last, lowest and
// highest sample with their times, units.ts) and by logs only where no rollup fits: the part's edges
// finer than a quarter and quarters marked stale (contract 6). So a year in 1,000 parts reads about
// ten rollup rows a part, not the year's logs.

export interface PlotBody {
  sensorId: number;
  start: string;
  end: string;
  intervals: number;
}

export const PLOT_FIELDS = ['sensorID', 'timestamp', 'value'];
const MAX_DAYS = 366;
const Q = 15 * 60_000;
const H = 60 * 60_000;
const D = 24 * H;
const LEVEL: Record<number, number> = { [Q]: 15, [H]: 60, [D]: 1440 };
const BELOW: Record<number, number> = { [D]: H, [H]: Q };
const floorTo = (t: number, w: number) => Math.floor(t / w) * w;
const ceilTo = (t: number, w: number) => Math.ceil(t / w) * w;

/** One source of a part: rollups of a level (minutes) or logs (0) over [a, b). */
type Segment = [level: number, a: number, b: number, part: number];

/** The segments covering the parts, given the stale quarters (epoch ms, ascending). */
export function planSegments(start: number, end: number, n: number, stale: number[]): Segment[] {
  const width = Math.floor((end - start) / n);
  const out: Segment[] = [];
  const staleIn = (a: number, b: number) => {
    let lo = 0;
    let hi = stale.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (stale[mid] < a) lo = mid + 1;
      else hi = mid;
    }
    const found: number[] = [];
    for (let i = lo; i < stale.length && stale[i] < b; i++) found.push(stale[i]);
    return found;
  };
  /** Rollups of width w over [a, b) (aligned), the stale ones replaced by the level below. */
  const rollups = (w: number, a: number, b: number, part: number) => {
    if (a >= b) return;
    const bad = [...new Set(staleIn(a, b).map((q) => floorTo(q, w)))];
    let from = a;
    for (const u of bad) {
      if (u > from) out.push([LEVEL[w], from, u, part]);
      if (w === Q) out.push([0, u, u + Q, part]);
      else rollups(BELOW[w], u, u + w, part);
      from = u + w;
    }
    if (from < b) out.push([LEVEL[w], from, b, part]);
  };
  /** Whole quarters [x, y): days where they fit, hours at their edges, then quarters. */
  const cover = (x: number, y: number, k: number) => {
    const [h1, h2] = [ceilTo(x, H), floorTo(y, H)];
    if (h1 >= h2) return rollups(Q, x, y, k);
    rollups(Q, x, h1, k);
    rollups(Q, h2, y, k);
    const [d1, d2] = [ceilTo(h1, D), floorTo(h2, D)];
    if (d1 >= d2) return rollups(H, h1, h2, k);
    rollups(H, h1, d1, k);
    rollups(D, d1, d2, k);
    rollups(H, d2, h2, k);
  };
  for (let k = 0; k < n; k++) {
    const a = start + k * width;
    const b = k === n - 1 ? end : a + width;
    if (a >= b) continue;
    const s15 = ceilTo(a, Q);
    const e15 = floorTo(b, Q);
    if (s15 >= e15) {
      out.push([0, a, b, k]);
      continue;
    }
    if (a < s15) out.push([0, a, s15, k]);
    cover(s15, e15, k);
    if (e15 < b) out.push([0, e15, b, k]);
  }
  return out;
}

const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;
// Each part's first, last, lowest and highest sample as plain min/max over arrays (compared element by
// element): [time, value] for first and last, [value, time] for the lowest (the earliest of equal
// values), [value, -time] for the highest. No per-part sort.
const t = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;
const PLOT_SQL = `
  SELECT s.part, min(ARRAY[${t('first_ts')}, v_first]) AS first, max(ARRAY[${t('last_ts')}, v_last]) AS last,
    min(ARRAY[v_min, ${t('v_tmin')}]) AS lo, max(ARRAY[v_max, -${t('v_tmax')}]) AS hi
  FROM unnest($2::int[], $3::float8[], $4::float8[], $5::int[]) AS s(level, a, b, part)
  CROSS JOIN LATERAL (
    SELECT r.first_ts, r.v_first, r.last_ts, r.v_last, r.v_min, r.v_tmin, r.v_max, r.v_tmax FROM sensor_rollups r
     WHERE s.level > 0 AND r.sensor_id = $1 AND r.level = s.level AND r.bucket >= to_timestamp(s.a / 1000) AND r.bucket < to_timestamp(s.b / 1000)
    UNION ALL
    SELECT g.ts, g.value, g.ts, g.value, g.value, g.ts, g.value, g.ts FROM sensor_logs g
     WHERE s.level = 0 AND g.sensor_id = $1 AND g.ts >= to_timestamp(s.a / 1000) AND g.ts < to_timestamp(s.b / 1000)
    OFFSET 0) u
  GROUP BY s.part ORDER BY s.part`;

/** Checks the request (400/404/403) and returns its records. */
export async function openPlot(db: Queryable, access: Access, body: PlotBody): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const stale = (
    await db.query<{ b: number }>(
      `SELECT ${ms('bucket')} AS b FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1
         AND bucket >= $2::timestamptz - interval '15 minutes' AND bucket < $3::timestamptz ORDER BY bucket`,
      [body.sensorId, new Date(start).toISOString(), new Date(end).toISOString()],
    )
  ).map((r) => Number(r.b));
  const segments = planSegments(start, end, body.intervals, stale);
  const rows = await db.query<Record<'first' | 'last' | 'lo' | 'hi', number[]>>(
    PLOT_SQL,
    [
      body.sensorId,
      segments.map((s) => s[0]),
      segments.map((s) => s[1]),
      segments.map((s) => s[2]),
      segments.map((s) => s[3]),
    ],
    { indexOrder: true },
  );
  const records: Values[] = [];
  for (const r of rows) {
    const picked = new Map<number, number>();
    picked.set(Number(r.first[0]), Number(r.first[1]));
    picked.set(Number(r.last[0]), Number(r.last[1]));
    picked.set(Number(r.lo[1]), Number(r.lo[0]));
    picked.set(-Number(r.hi[1]), Number(r.hi[0]));
    for (const t of [...picked.keys()].sort((x, y) => x - y))
      records.push([body.sensorId, new Date(t).toISOString(), picked.get(t)!]);
  }
  async function* pages(): AsyncGenerator<Values[]> {
    yield records;
  }
  return { fields: PLOT_FIELDS, pages: pages() };
}
