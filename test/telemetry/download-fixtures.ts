import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { markAll, refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { UNIT_LIST } from '../../src/telemetry/rollups/units.js';
import { bearer, type TestContext } from '../helper.js';
import { count, KINDS, poster } from './fixtures.js';

// Helpers of the download suites (POST /v1/<kind>/logs/load and /v1/sensors/logs/raw).

export type Kind = (typeof KINDS)[number];
export const LOAD_URL: Record<Kind, string> = {
  sensor: '/v1/sensors/logs/load',
  meter: '/v1/meters/logs/load',
  pump: '/v1/pumps/logs/load',
  tank: '/v1/tanks/logs/load',
};
export const IDS_FIELD: Record<Kind, string> = {
  sensor: 'sensorIds',
  meter: 'meterIds',
  pump: 'pumpIds',
  tank: 'tankGroupIds',
};
export const RAW_URL = '/v1/sensors/logs/raw';
/** The five download routes. */
export const DOWNLOAD_URLS = [...KINDS.map((k) => LOAD_URL[k]), RAW_URL];

/** Output time form: UTC with milliseconds. */
export const iso = (t: string) => new Date(t).toISOString();

export interface Answer {
  status: number;
  type: string;
  text: string;
  body: any;
  res: LightMyRequestResponse;
}

/** POST a download with the token (or the given headers) and an optional Accept header. */
export function downloader(ctx: TestContext, token: string | null) {
  return async (
    url: string,
    payload: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const res = await ctx.app.inject({
      method: 'POST',
      url,
      headers: { ...(token ? bearer(token) : {}), 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    const type = String(res.headers['content-type'] ?? '');
    return {
      status: res.statusCode,
      type,
      text: res.body,
      body: type.startsWith('application/json') ? res.json() : undefined,
      res,
    };
  };
}

/** A summary request body of a kind. */
export const loadBody = (
  kind: Kind,
  ids: unknown,
  start: string,
  end: string,
  more: Record<string, unknown> = {},
) => ({
  [IDS_FIELD[kind]]: ids,
  start,
  end,
  ...more,
});

/** Loads summaries that must be answered 200, and returns their elements. */
export function summaryLoader(ctx: TestContext, token: string) {
  const get = downloader(ctx, token);
  return async (
    kind: Kind,
    ids: number[],
    start: string,
    end: string,
    more: Record<string, unknown> = {},
  ): Promise<Record<string, any>[]> => {
    const a = await get(LOAD_URL[kind], loadBody(kind, ids, start, end, more));
    expect(a.status, a.text).toBe(200);
    return a.body;
  };
}

/** Stores logs of one kind through the batch upload route, 10,000 a request; every request must be a 201. */
export async function storeLogs(
  ctx: TestContext,
  token: string,
  kind: Kind,
  records: Record<string, unknown>[],
) {
  const post = poster(ctx, token);
  let stored = 0;
  for (let i = 0; i < records.length; i += 10_000) {
    const res = await post(`logs/${kind}/batch`, records.slice(i, i + 10_000));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    stored += res.body.stored;
  }
  return stored;
}

/**
 * Runs the checks three times: as uploaded (closed quarters rolled up by the upload itself), with
 * every bucket marked stale (read from the logs), then after the refresher brought the rollups up to
 * date again (read from the rollups it wrote).
 */
export async function inBothStates(
  ctx: TestContext,
  check: (state: 'uploaded' | 'stale' | 'clean') => Promise<void>,
) {
  await check('uploaded');
  for (const spec of UNIT_LIST) await markAll(ctx.db, spec);
  expect(await count(ctx.db, 'rollup_dirty'), 'stale marks before the stale check').toBeGreaterThan(
    0,
  );
  await check('stale');
  await refreshAll(ctx.db);
  expect(await count(ctx.db, 'rollup_dirty'), 'no stale mark after the refresh').toBe(0);
  await check('clean');
}

/** A sensor summary element over values in time order. */
export const sensorSummary = (sensorID: number, start: string, end: string, values: number[]) => ({
  sensorID,
  start: iso(start),
  end: iso(end),
  count: values.length,
  min: Math.min(...values),
  max: Math.max(...values),
  avg: values.reduce((a, b) => a + b, 0) / values.length,
  first: values[0],
  last: values[values.length - 1],
});

/** Sensor logs from [timestamp, value] pairs. */
export const sensorLogs = (sensorID: number, pairs: [string, number][]) =>
  pairs.map(([timestamp, value]) => ({ sensorID, timestamp, value }));

/** Checks the contract's error body (and that it is JSON, whatever the Accept header said). */
export function expectError(a: Answer, status: number, error: string) {
  expect(a.status, a.text).toBe(status);
  expect(a.type).toMatch(/^application\/json/);
  expect(a.body).toMatchObject({ statusCode: status, error, message: expect.any(String) });
  expect(
    Object.keys(a.body).every((k) => ['statusCode', 'error', 'message', 'details'].includes(k)),
  ).toBe(true);
  expect(a.body.message.length).toBeGreaterThan(0);
  if (a.body.details !== undefined)
    for (const d of a.body.details)
      expect(d).toEqual({ path: expect.any(String), message: expect.any(String) });
}

/** RFC 4180 reader for the CSV answers: rows of fields; fails on a line end that is not CRLF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else if (c === '\n' || c === '\r') throw new Error(`bare line end at ${i}`);
    else field += c;
  }
  if (field !== '' || row.length) throw new Error('the last line does not end with CRLF');
  return rows;
}

/** The CSV form the contract asks for of JSON elements: the fields in order, null as an empty field. */
export const csvOf = (elements: Record<string, unknown>[], fields: string[]) => [
  fields,
  ...elements.map((e) => fields.map((f) => (e[f] === null ? '' : String(e[f])))),
];
