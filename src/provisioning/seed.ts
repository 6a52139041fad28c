import { randomBytes } from 'node:crypto';
import type { Database } from '../db/index.js';
import { upsertClient } from '../auth/clients.js';
import { generateDemo } from './demo.js';
import { importDocument } from './import.js';
import { DEMO_DAYS, seedDemoTelemetry } from '../telemetry/demo.js';
import { rebuildAll } from '../telemetry/rollups/refresh.js';
import { seedDemoAlarms, seedDemoRuleAlarms } from '../alarms/demo.js';

const DEMO_CLIENT_ID = 'demo';
/** The service setting that says the demo data's statistics are still to be gathered. */
const STATISTICS_DUE = `'demo_statistics_due'`;

/**
 * Fills a database that has never been seeded with the demo data set and a demo client whose secret
 * is made here and returned once (only its hash is stored). Returns undefined when already seeded.
 * The demo client is an admin, so a running embedded service can be administered over HTTP at once.
 */
export async function seedDemo(
  db: Database,
  timings: Record<string, number> = {},
): Promise<{ clientId: string; clientSecret: string } | undefined> {
  let lap = performance.now();
  const took = (phase: string) => {
    const now = performance.now();
    timings[phase] = Math.round(now - lap);
    lap = now;
  };
  const [mark] = await db.query(`SELECT 1 FROM service_settings WHERE key = 'demo_seeded'`);
  const [anySite] = await db.query(`SELECT 1 FROM sites LIMIT 1`);
  if (mark || anySite) return undefined;
  // A haul-off every 6 hours at each site over the whole history: its tank levels follow them.
  const { notificationChannels, notificationPolicies, ...doc } = generateDemo({
    alarmManagement: true,
    transactionsPerSite: DEMO_DAYS * 4,
  });
  await importDocument(db, doc);
  took('configuration');
  await seedDemoTelemetry(db);
  took('history');
  // The demo history is written around the upload path: roll it up now, so its summaries start fast.
  await rebuildAll(db);
  took('rollups');
  await seedDemoAlarms(db);
  // The notification policy applies to alarms raised from now on: not to the history just made.
  await importDocument(db, { notificationChannels, notificationPolicies });
  // Its limit rules on the latest history, and the site whose data stopped: raised by the service's
  // own code, as they would be had the history been uploaded.
  await seedDemoRuleAlarms(db);
  took('alarms');
  const clientSecret = randomBytes(18).toString('base64url');
  await upsertClient(db, {
    clientId: DEMO_CLIENT_ID,
    clientSecret,
    siteIds: '*',
    cameraIds: '*',
    admin: true,
  });
  // Its statistics are gathered once the service answers (gatherDemoStatistics), or at the next start.
  await db.query(
    `INSERT INTO service_settings (key, value) VALUES ('demo_seeded', now()::text), (${STATISTICS_DUE}, now()::text)
       ON CONFLICT (key) DO NOTHING`,
  );
  // The history went through the write-ahead log once; a checkpoint lets the embedded database drop
  // those files now rather than keep them until its next one.
  if (db.kind === 'pglite') await db.exec('CHECKPOINT');
  took('checkpoint');
  return { clientId: DEMO_CLIENT_ID, clientSecret };
}

/**
 * Gathers the statistics of the service's tables after the demo data was loaded (seedDemo), once:
 * the server runs it once it has answered its first request, so that the first start is not kept
 * waiting for it, and at every later start, which finds nothing to do unless a first start stopped
 * before. Returns whether it gathered them.
 *
 * The service bulk-loaded these tables itself: it gathers their statistics too, rather than leave the
 * planner to guess until autovacuum comes by (PGlite has none). Plans do not depend on them
 * (QueryOptions.indexOrder), but the other queries of a fresh demo are better with them. Only the
 * service's own tables: a plain ANALYZE would gather every schema of a shared database.
 */
export async function gatherDemoStatistics(db: Database): Promise<boolean> {
  const [due] = await db.query(`SELECT 1 FROM service_settings WHERE key = ${STATISTICS_DUE}`);
  if (!due) return false;
  const tables = await db.query<{ name: string }>(
    `SELECT quote_ident(c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  // One table at a time, letting other work run in between: the embedded database holds this thread
  // while it analyzes (the largest, a rollup table, takes about 0.7 s; all of them about 2.5 s).
  for (const t of tables) {
    await new Promise((resolve) => setImmediate(resolve));
    await db.exec(`ANALYZE ${t.name}`);
  }
  await db.query(`DELETE FROM service_settings WHERE key = ${STATISTICS_DUE}`);
  // What it wrote went through the write-ahead log (the demo's data directory was some 25 MB larger
  // without this): as after seeding, a checkpoint lets the embedded database drop those files now.
  if (db.kind === 'pglite') await db.exec('CHECKPOINT');
  return true;
}
