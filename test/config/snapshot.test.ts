import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database, Queryable } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import {
  bearer,
  describeEachBackend,
  startApp,
  testSettings,
  type TestContext,
  instrument,
} from '../helper.js';
import { get } from './fixture.js';

// Issue 10: every configuration answer comes from one snapshot. One task imports two states in
// turn (A, then B: every name changed, every sensor's registers moved to the next sensor, pump
// roles swapped) while readers ask for whole-site and by-id configuration; every answer must be
// exactly the one of A or the one of B, never a mix. Then, to leave nothing to timing, an import is
// made to commit just before each query of one read in turn.

const OPTS = {
  sites: 1,
  sensorsPerSite: 100,
  metersPerSite: 6,
  pumpsPerSite: 6,
  tanksPerSite: 4,
  transactionsPerSite: 0,
  imagesPerSite: 0,
};
const IMPORTS = 30;

/** The configuration lists of the demo site in state A or B. */
function state(which: 'A' | 'B') {
  const doc = generateDemo({ ...OPTS, now: new Date('2026-06-01T12:00:00Z') });
  const named = (list: any[], field = 'Name') =>
    list.forEach((r) => (r[field] = `${r[field]} ${which}`));
  [doc.registers, doc.sensors, doc.flowMeters, doc.pumps, doc.tankGroups].forEach((l) => named(l));
  named(doc.modbusDevices, 'DeviceName');
  if (which === 'B') {
    const lists = doc.sensors.map((s) => s.RegisterIDs);
    doc.sensors.forEach((s, i) => (s.RegisterIDs = lists[(i + 1) % lists.length]));
    for (const { Registers: roles } of doc.pumps)
      [roles!.Running, roles!.Start] = [roles!.Start, roles!.Running];
  }
  const { registers, sensors, flowMeters, pumps, tankGroups, modbusDevices } = doc;
  return { registers, sensors, flowMeters, pumps, tankGroups, modbusDevices };
}

const URLS = [
  '/v1/config/site?siteId=1',
  '/v1/config/site/compact?siteId=1',
  '/v1/config/updates/site/light?siteId=1&startDate=2000-01-01T00:00Z',
  '/v1/config/updates/site/compact?siteId=1&startDate=2000-01-01T00:00Z',
  '/v1/config/site/sensors/light?siteId=1',
  '/v1/config/pumps/10401',
  '/v1/config/updates/meters/10301?startDate=2000-01-01T00:00Z',
  '/v1/config/sensors/10100',
  '/v1/config/updates/sensors/10101/light?startDate=2000-01-01T00:00Z',
];

describeEachBackend('configuration snapshot under concurrent imports', (backend) => {
  let ctx: TestContext;
  let token: string;
  const states = { A: state('A'), B: state('B') };
  const answers: Record<'A' | 'B', Map<string, string>> = { A: new Map(), B: new Map() };
  const read = async (url: string) => {
    const { status, body } = await get(ctx, url, token);
    expect(status, url).toBe(200);
    return JSON.stringify(body);
  };

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: OPTS });
    token = await ctx.token('*');
    // A full round first, so that every link has changed once and the traces no longer grow.
    for (const which of ['A', 'B', 'A', 'B'] as const) {
      await importDocument(ctx.db, states[which]);
      for (const url of URLS) answers[which].set(url, await read(url));
    }
  });
  afterAll(async () => ctx?.close());

  it('tells A from B on every path', () => {
    for (const url of URLS) expect(answers.A.get(url), url).not.toBe(answers.B.get(url));
  });

  it('answers wholly A or wholly B while imports land', async () => {
    let done = false;
    let reads = 0;
    const seen = { A: 0, B: 0 };
    const mixed: string[] = [];
    const failures: string[] = [];
    // The importer waits for a few reads between imports (PGlite would otherwise serve it first); a
    // promise, not a timer: reads on PGlite can run on microtasks alone and starve timers.
    let waiting: { until: number; resolve: () => void } | undefined;
    const counted = () => {
      reads++;
      if (waiting && (done || reads >= waiting.until)) waiting.resolve();
    };
    const importer = async () => {
      try {
        for (let i = 0; i < IMPORTS && !done; i++) {
          await importDocument(ctx.db, states[i % 2 ? 'B' : 'A']);
          await new Promise<void>((resolve) => (waiting = { until: reads + 1, resolve }));
        }
      } finally {
        done = true;
      }
    };
    const reader = async (offset: number) => {
      try {
        for (let i = offset; !done; i++, counted()) {
          const url = URLS[i % URLS.length];
          const { status, body } = await get(ctx, url, token);
          const text = JSON.stringify(body);
          if (status !== 200) failures.push(`${url}: ${status} ${text}`);
          else if (text === answers.A.get(url)) seen.A++;
          else if (text === answers.B.get(url)) seen.B++;
          else mixed.push(url);
        }
      } catch (err) {
        failures.push(String(err));
        done = true;
        waiting?.resolve();
      }
    };
    await Promise.all([importer(), reader(0), reader(3), reader(6)]);
    expect(failures).toEqual([]);
    expect(mixed).toEqual([]);
    // Both states were read while importing, many times: the check above had something to check.
    expect(seen.A).toBeGreaterThan(IMPORTS);
    expect(seen.B).toBeGreaterThan(IMPORTS);
  }, 180_000);

  it('answers wholly A or wholly B when an import commits between any two queries of a read', async () => {
    const hooked = interleaving(ctx.db);
    const app = await buildApp(testSettings(), { db: hooked.db, logger: false });
    // Started before counting: the queries of its start (onReady hooks) are not a read's.
    await app.ready();
    try {
      await app.ready(); // background work starts here, outside any read

      const ask = async (url: string) =>
        JSON.stringify((await app.inject({ method: 'GET', url, headers: bearer(token) })).json());
      // Every import changes the state, so every read finds the cache out of date and reads the database.
      let current: 'A' | 'B' = 'A';
      const flip = async () =>
        importDocument(ctx.db, states[(current = current === 'A' ? 'B' : 'A')]);
      await importDocument(ctx.db, states.A);
      let checked = 0;
      for (const url of [
        '/v1/config/site/compact?siteId=1',
        '/v1/config/pumps/10401',
        '/v1/config/sensors/10100',
      ]) {
        await flip();
        const queries = await hooked.count(() => ask(url));
        for (let k = 1; k <= queries; k++) {
          await flip();
          let landed: Promise<unknown> | undefined;
          const body = await hooked.before(
            k,
            () => (landed = flip()),
            () => ask(url),
          );
          expect(landed, `${url}: no query ${k}`).toBeDefined();
          await landed;
          expect(
            [answers.A.get(url), answers.B.get(url)],
            `${url}, import before query ${k} of ${queries}`,
          ).toContain(body);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(15);
    } finally {
      await app.close();
    }
  }, 180_000);
});

/**
 * The database with a hook: before the k-th query of the next read (in a snapshot or not), an
 * import is started and committed. PGlite runs one transaction at a time, so there an import
 * started inside an open snapshot cannot commit before the snapshot ends: the read goes on at
 * once, and the import commits after it.
 */
function interleaving(db: Database) {
  let n = 0;
  let hook: { at: number; run: () => Promise<unknown> } | undefined;
  // Only the read's own queries count, not those of the app's background work (the alarm rules'
  // passes, shelf expiry), which run on timers started outside the read.
  const reading = new AsyncLocalStorage<true>();
  const wrap = (q: Queryable, inSnapshot: boolean): Queryable => ({
    async query(sql, params) {
      if (!reading.getStore()) return q.query(sql, params);
      n++;
      if (hook && n === hook.at) {
        const started = hook.run();
        hook = undefined;
        if (!(inSnapshot && db.kind === 'pglite')) await started;
      }
      return q.query(sql, params);
    },
  });
  return {
    db: instrument(db, (view) => ({
      query: wrap(view, false).query,
      snapshot: (fn) => view.snapshot((tx) => fn(wrap(tx, true))),
    })),
    /** How many queries a read sends. */
    async count(read: () => Promise<unknown>) {
      n = 0;
      await reading.run(true, read);
      return n;
    },
    /** Runs `run` before the read's query `at`; `read` is the read. */
    async before(at: number, run: () => Promise<unknown>, read: () => Promise<string>) {
      n = 0;
      hook = { at, run };
      return reading.run(true, read);
    },
  };
}
