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
// values), [value, -time] for the highest. No per-part sort. Rollup segments and log segments are two
// statements, sent at once on two connections (two cores), whose parts are merged here. OFFSET 0 keeps
// each lateral a lookup per segment (pulled up into a join, it was planned as a scan of every row of
// the sensor's level: seconds).
const pair = (agg: 'min' | 'max', x: string, y: string, name: string) =>
  `(${agg}(ARRAY[${x}, ${y}]))[1] AS ${name}0, (${agg}(ARRAY[${x}, ${y}]))[2] AS ${name}1`;
const EXTREMES = [
  pair('min', ms('first_ts'), 'v_first', 'first'),
  pair('max', ms('last_ts'), 'v_last', 'last'),
  pair('min', 'v_min', ms('v_tmin'), 'lo'),
  pair('max', 'v_max', `-${ms('v_tmax')}`, 'hi'),
].join(',\n    ');
const ROLLUP_SQL = `SELECT s.part, ${EXTREMES}
  FROM unnest($2::int[], $3::float8[], $4::float8[], $5::int[]) AS s(level, a, b, part)
  CROSS JOIN LATERAL (
    SELECT r.first_ts, r.v_first, r.last_ts, r.v_last, r.v_min, r.v_tmin, r.v_max, r.v_tmax FROM sensor_rollups r
     WHERE r.sensor_id = $1 AND r.level = s.level AND r.bucket >= to_timestamp(s.a / 1000) AND r.bucket < to_timestamp(s.b / 1000) OFFSET 0) u
  GROUP BY s.part`;
// A log segment [a, b) of part `part`, or where two parts meet inside a quarter, the logs of both
// sides of the boundary `split` in one lookup: before it of `part`, from it on of the next part.
const LOG_SQL = `SELECT u.part, ${EXTREMES}
  FROM unnest($2::float8[], $3::float8[], $4::float8[], $5::int[]) AS s(split, a, b, part)
  CROSS JOIN LATERAL (
    SELECT CASE WHEN g.ts < to_timestamp(s.split / 1000) THEN s.part ELSE s.part + 1 END AS part,
      g.ts AS first_ts, g.value AS v_first, g.ts AS last_ts, g.value AS v_last, g.value AS v_min, g.ts AS v_tmin,
      g.value AS v_max, g.ts AS v_tmax FROM sensor_logs g
     WHERE g.sensor_id = $1 AND g.ts >= to_timestamp(s.a / 1000) AND g.ts < to_timestamp(s.b / 1000) OFFSET 0) u
  GROUP BY u.part`;

/** The log segments as [split, a, b, part]: adjacent ones of consecutive parts joined at their boundary. */
function logLookups(segments: Segment[]): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (const [level, a, b, part] of segments) {
    if (level !== 0) continue;
    const last = out[out.length - 1];
    if (last && last[2] === a && last[3] + 1 === part && last[0] === last[2]) {
      last[2] = b;
      continue;
    }
    out.push([b, a, b, part]);
  }
  return out;
}

type Extremes = Record<'first' | 'last' | 'lo' | 'hi', number[]>;
/** A part's row: each extreme as its two elements (scalars: arrays cost the client far more to decode). */
type PartRow = Record<`${'first' | 'last' | 'lo' | 'hi'}${0 | 1}` | 'part', number>;

/** [a, b] compared element by element, as the database compares arrays. */
const before = (x: number[], y: number[]) =>
  Number(x[0]) < Number(y[0]) || (Number(x[0]) === Number(y[0]) && Number(x[1]) < Number(y[1]));

/** The parts' extremes of both statements, merged per part, in part order. */
function mergeParts(a: PartRow[], b: PartRow[]): Extremes[] {
  const parts = new Map<number, Extremes>();
  for (const row of [...a, ...b]) {
    const k = Number(row.part);
    const r = {
      first: [row.first0, row.first1],
      last: [row.last0, row.last1],
      lo: [row.lo0, row.lo1],
      hi: [row.hi0, row.hi1],
    };
    const m = parts.get(k);
    if (!m) {
      parts.set(k, r);
      continue;
    }
    if (before(r.first, m.first)) m.first = r.first;
    if (before(m.last, r.last)) m.last = r.last;
    if (before(r.lo, m.lo)) m.lo = r.lo;
    if (before(m.hi, r.hi)) m.hi = r.hi;
  }
  return [...parts.keys()].sort((x, y) => x - y).map((k) => parts.get(k)!);
}

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
  const run = (sql: string, list: number[][]) =>
    list.length === 0
      ? Promise.resolve([] as PartRow[])
      : db.query<PartRow>(sql, [body.sensorId, ...[0, 1, 2, 3].map((i) => list.map((s) => s[i]))], {
          indexOrder: true,
        });
  const rows = mergeParts(
    ...(await Promise.all([
      run(
        ROLLUP_SQL,
        segments.filter((s) => s[0] > 0),
      ),
      run(LOG_SQL, logLookups(segments)),
    ])),
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
