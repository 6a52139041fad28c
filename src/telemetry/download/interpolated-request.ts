import { badRequest, invalidField } from '../../errors.js';
import { parseRange, parseTime } from '../../time.js';

// The request of interpolated values (contract 13): either given times or a grid (interval, start
// and end), checked (400) before anything is read.

export type GridInterval = '1m' | '5m' | '15m' | '1h' | '1d';

export interface InterpolatedBody {
  sensorIds: number[];
  start?: string;
  end?: string;
  interval?: GridInterval;
  timeZone?: string;
  times?: string[];
}

export const MAX_DAYS = 366;
export const MAX_VALUES = 100_000;
export const MINUTES: Record<GridInterval, number> = {
  '1m': 1,
  '5m': 5,
  '15m': 15,
  '1h': 60,
  '1d': 1440,
};

/** The instants asked for: the given times (epoch ms, in the order given) or the grid's range. */
export type Instants =
  | { times: number[]; range?: undefined }
  | { times?: undefined; range: { start: number; end: number } };

/** The request's instants, for `sensors` sensors; throws the 400 of a request that is not one. */
export function readInstants(body: InterpolatedBody, sensors: number): Instants {
  if (body.times !== undefined) {
    if (body.interval !== undefined)
      throw badRequest('give either interval or times, not both', [
        { path: '/times', message: 'not allowed with interval' },
      ]);
    if (body.start !== undefined || body.end !== undefined)
      throw badRequest('with times, start and end are omitted', [
        { path: body.start !== undefined ? '/start' : '/end', message: 'not allowed with times' },
      ]);
    const times = body.times.map((text, i) => {
      const t = parseTime(text);
      if (t === undefined) throw invalidField(`/times/${i}`, 'is not an ISO 8601 date-time');
      return t;
    });
    if (sensors * times.length > MAX_VALUES) throw tooMany(sensors * times.length);
    return { times };
  }
  if (body.interval === undefined)
    throw badRequest('give interval (with start and end) or times', [
      { path: '/interval', message: 'required without times' },
    ]);
  if (body.start === undefined || body.end === undefined)
    throw badRequest('start and end are required with interval', [
      { path: body.start === undefined ? '/start' : '/end', message: 'required with interval' },
    ]);
  const range = parseRange(body.start, body.end, MAX_DAYS);
  // Grid instants in [start, end]: at most one per step, plus one (local clocks repeat at most an hour).
  const per = Math.floor((range.end - range.start) / (MINUTES[body.interval] * 60_000)) + 2;
  if (sensors * per > MAX_VALUES) throw tooMany(sensors * per);
  return { range };
}

const tooMany = (n: number) =>
  badRequest(
    `the request would make about ${n} values, over ${MAX_VALUES}: ask for fewer sensors, a shorter range or a longer interval`,
    [{ path: '/sensorIds', message: 'too many values' }],
  );
