import { randomBytes } from 'node:crypto';
import { buildApp, type FastifyTypebox } from '../src/app.js';
import { loadSettings, type Settings } from '../src/settings.js';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import type { Database } from '../src/db/index.js';
import type { ServiceMetrics } from '../src/metrics.js';
import { upsertClient, type NewClient } from '../src/auth/clients.js';
import { generateDemo, type DemoOptions } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { describeWith, unavailable } from './needs.js';

export { describeWith } from './needs.js';

export type Backend = 'pglite' | 'postgres';

/**
 * PGlite always; PostgreSQL too when TEST_DATABASE_URL is set (TEST_BACKENDS=postgres runs only that).
 * The backends of this run: the others' suites are skipped, with the reason noted (test/needs.ts).
 */
export const backends: Backend[] = (['pglite', 'postgres'] as const).filter((b) => !unavailable(b));

/**
 * describe() once per backend, named after it. A backend this run leaves out still gets its
 * describe, skipped with the reason, so the summary at the end counts what did not run.
 */
export const describeEachBackend = (name: string, fn: (backend: Backend) => void) => {
  for (const backend of ['pglite', 'postgres'] as const)
    describeWith([backend], `${name} [${backend}]`, () => fn(backend), { eachBackend: true });
};

/** A fresh, migrated database (unless migrate: false): in-memory PGlite, or a schema of its own on the test PostgreSQL. */
export async function openTestDb(
  backend: Backend,
  opts: { migrate?: boolean } = {},
): Promise<Database> {
  if (backend === 'pglite') {
    const db = await openPglite();
    if (opts.migrate !== false) await migrate(db);
    return db;
  }
  const url = process.env.TEST_DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await openPostgres(url, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const db = await openPostgres(url, { schema });
  if (opts.migrate !== false) await migrate(db);
  const close = db.close;
  return {
    ...db,
    close: async () => {
      await close();
      const a = await openPostgres(url, { max: 1 });
      await a.query(`DROP SCHEMA ${schema} CASCADE`);
      await a.close();
    },
  };
}

export const testSettings = (overrides: Partial<Settings> = {}): Settings =>
  loadSettings(
    {},
    {
      LOG_LEVEL: 'silent',
      ARCHIVE_AFTER_DAYS: 0,
      JWT_SECRET: 'test-secret-of-at-least-32-characters!!',
      RATE_LIMIT_MAX: 100_000,
      CLIENT_CACHE_MS: 0,
      ...overrides,
    },
  );

export interface TestContext {
  app: FastifyTypebox;
  db: Database;
  /** A bearer token of a client (created on first use) that reaches the given sites ('*' by default). */
  token(sites?: number[] | '*', extra?: Partial<NewClient>): Promise<string>;
  close(): Promise<void>;
}

/** The app on a fresh database, with the demo document (or the given one) imported. */
export async function startApp(
  backend: Backend,
  opts: {
    settings?: Partial<Settings>;
    demo?: DemoOptions | false;
    logger?: object;
    metrics?: ServiceMetrics;
  } = {},
): Promise<TestContext> {
  const db = await openTestDb(backend);
  if (opts.demo !== false) await importDocument(db, generateDemo(opts.demo ?? {}));
  const app = await buildApp(testSettings(opts.settings), {
    db,
    logger: opts.logger ?? false,
    metrics: opts.metrics,
  });
  await app.ready();
  let n = 0;
  return {
    app,
    db,
    async token(sites = '*', extra = {}) {
      const clientId = extra.clientId ?? `client-${++n}`;
      const clientSecret = extra.clientSecret ?? 'secret-123456';
      await upsertClient(db, { clientId, clientSecret, siteIds: sites, ...extra });
      const res = await app.inject({
        method: 'POST',
        url: '/token',
        payload: { clientId, clientSecret },
      });
      if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`);
      return res.json().accessToken;
    },
    async close() {
      await app.close();
      await db.close();
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * A client address of the 10/8 network, new at each call, for inject({ remoteAddress }): with
 * REDIS_URL the per-IP counters (POST /token) are shared by every run and suite using that Redis.
 */
export const uniqueAddress = () => `10.${[...randomBytes(3)].join('.')}`;

/**
 * The database with some of its methods replaced (to count, fail or delay calls), in its bounded
 * views too: the service calls the database through views with deadlines (Database.bounded).
 */
export function instrument(
  db: Database,
  over: (view: Database, ms: number) => Partial<Database>,
): Database {
  const make = (view: Database, ms: number): Database => ({
    ...view,
    ...over(view, ms),
    bounded: (next) => make(view.bounded(next), next),
  });
  return make(db, Infinity);
}
