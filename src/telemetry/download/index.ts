import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import type { Queryable } from '../../db/index.js';
import { badRequest } from '../../errors.js';
import { parseRange } from '../../time.js';
import { SEPARATOR, type Format, type Page } from '../../export/records.js';
import type { TelemetryKind } from '../kinds.js';
import type { SharedBuckets } from './output-buckets.js';
import { querySummaries } from './summaries.js';
import { estimateElements, type Interval } from './summary-buckets.js';
import { summaryFieldNames } from './summary-fields.js';
import { queryTimeWeighted } from './time-weighted.js';
import { isKnownZone } from './zones.js';

// The download engine behind POST /v1/<kind>/logs/load and /v1/sensors/logs/raw: checks a request
// (times, span, zone, equipment, access) and yields its records page by page.

const MAX_SUMMARY_DAYS = 366;
export const MAX_RAW_DAYS = 60;
/** Most elements one summary request may produce (ids × buckets): a year of 15-minute buckets for 57 equipment. */
const MAX_SUMMARY_ELEMENTS = 2_000_000;
/** Elements per database query: pages of the response (two are asked at once, see prefetched). */
const PAGE_ELEMENTS = 25_000;

export interface SummaryBody {
  ids: number[];
  start: string;
  end: string;
  interval?: Interval;
  timeZone?: string;
  /** Contract 13: eventWeighted (the default, contract 6) or timeWeighted. */
  calculationBasis?: 'eventWeighted' | 'timeWeighted';
}

export interface Download {
  fields: string[];
  pages: AsyncIterator<Page>;
}

/** Checks a summary request and returns its fields and pages; throws the 400/404/403 it deserves. */
export async function openSummaries(
  db: Queryable,
  access: Access,
  kind: TelemetryKind,
  body: SummaryBody,
  idsPath: string,
  format: Format,
): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_SUMMARY_DAYS);
  const interval = body.interval ?? '1h';
  const zoneName = body.timeZone ?? 'UTC';
  const ids = [...new Set(body.ids)].sort((left, right) => left - right);
  const elements = estimateElements({ ids, start, end, interval });
  if (elements > MAX_SUMMARY_ELEMENTS)
    throw badRequest(
      `the request would make about ${elements} summaries, over ${MAX_SUMMARY_ELEMENTS}: ask for fewer ids, a shorter range or a longer interval`,
      [{ path: idsPath, message: 'too many summaries for this range and interval' }],
    );
  if (zoneName !== 'site' && !(await isKnownZone(db, zoneName)))
    throw badRequest(
      `unknown time zone '${zoneName.slice(0, 64)}': use an IANA name such as Europe/Berlin, or "site"`,
      [{ path: '/timeZone', message: 'unknown time zone' }],
    );
  const sites = await requireEquipment(db, access, kind, ids);
  const zones = zoneName === 'site' ? await siteZones(db, [...new Set(sites.values())]) : undefined;
  const zoneOf = (id: number) => (zones ? zones.get(sites.get(id)!)! : zoneName);
  // Time-weighted pages share their zones' output buckets.
  const buckets: SharedBuckets = new Map();

  const perId = Math.max(1, Math.floor(PAGE_ELEMENTS / (elements / ids.length)));
  const chunks: number[][] = [];
  for (let from = 0; from < ids.length; from += perId) chunks.push(ids.slice(from, from + perId));
  const page = async (chunk: number[]): Promise<Page> => {
    const byZone = new Map<string, number[]>();
    for (const id of chunk) byZone.set(zoneOf(id), [...(byZone.get(zoneOf(id)) ?? []), id]);
    if (body.calculationBasis === 'timeWeighted') {
      const parts = await Promise.all(
        [...byZone].map(([zone, group]) =>
          queryTimeWeighted(db, kind, { ids: group, start, end, interval, zone }, format, buckets),
        ),
      );
      const sorted = parts.flat().sort((left, right) => left.id - right.id);
      return { text: sorted.map((part) => part.text).join(SEPARATOR[format]) };
    }
    const parts = await Promise.all(
      [...byZone].map(([zone, group]) =>
        querySummaries(db, kind, { ids: group, start, end, interval, zone }, format),
      ),
    );
    // One text per equipment; the zones' groups hold different ids, so ordering by id interleaves them.
    const texts =
      parts.length === 1 ? parts[0] : parts.flat().sort((left, right) => left.id - right.id);
    return { text: texts.map((part) => part.text).join(SEPARATOR[format]) };
  };
  return { fields: summaryFieldNames(kind), pages: prefetched(chunks, page) };
}

/**
 * Pages of `items` made by `load`, in order, with up to `ahead` pages asked of the database at once:
 * the database works on the next pages (on as many connections, so on several cores) while the
 * current one is sent, and memory holds at most `ahead` pages.
 */
export async function* prefetched<T, P>(
  items: T[],
  load: (item: T) => Promise<P>,
  ahead = 2,
): AsyncGenerator<P> {
  const pending: Promise<P>[] = [];
  let asked = 0;
  const fill = () => {
    while (pending.length < ahead && asked < items.length) {
      const page = load(items[asked++]);
      // Handled here so that a page failing while an earlier one is awaited is not an unhandled
      // rejection; awaiting it below still throws its error.
      page.catch(() => {});
      pending.push(page);
    }
  };
  fill();
  while (pending.length) {
    const current = await pending.shift()!;
    fill();
    yield current;
  }
}

/** Each site's zone for timeZone "site": UTC where it has none; 400 for a zone the service does not know. */
export async function siteZones(db: Queryable, siteIds: number[]): Promise<Map<number, string>> {
  const rows = await db.query<{ site_id: number; time_zone: string | null }>(
    `SELECT site_id, time_zone FROM sites WHERE site_id = ANY($1::int[])`,
    [siteIds],
  );
  const zones = new Map<number, string>();
  for (const row of rows) {
    const zone = row.time_zone || 'UTC';
    if (!(await isKnownZone(db, zone)))
      throw badRequest(
        `site ${row.site_id} has the time zone '${zone.slice(0, 64)}', which the service does not know: ask for an IANA zone instead of "site"`,
        [{ path: '/timeZone', message: 'a site of the request has an unknown time zone' }],
      );
    zones.set(row.site_id, zone);
  }
  return zones;
}
