import { spawnSync } from 'node:child_process';
import { describe } from 'vitest';
import { PG_BIN_DIR } from './pg-bin.js';

// What a suite needs beyond Node, and the describe() that records why it did not run: the summary
// at the end of a run (test/reporter.ts) counts the skipped suites and tests from these notes.
// No imports from src/: the reporter reads the types of this file in the main Vitest process.

/** A database the tests run on, or a service or program a suite needs. */
export type Need =
  'pglite' | 'postgres' | 'redis' | 'haproxy' | 'pg_dump' | 'mosquitto' | 'patroni';

/** Whether a program answers its version flag (it is installed and on PATH). */
const runs = (program: string, flag: string) =>
  spawnSync(program, [flag], { stdio: 'ignore' }).status === 0;

export interface Skip {
  /** Why the suite did not run here. */
  reason: string;
  /** The command that runs it. */
  howToRun: string;
}

/** Notes on a suite's task.meta, read by test/reporter.ts. */
export interface SuiteNotes {
  /** The database the suite runs on, whether it ran or not. */
  database?: 'pglite' | 'postgres';
  /** One of the suites describeEachBackend makes, one per database. */
  eachBackend?: boolean;
  /** Set when the suite was skipped because something it needs is missing here. */
  skipped?: Skip;
}

/** The MQTT broker the MQTT suites use: TEST_MQTT_URL, else the local Mosquitto. */
export const mqttUrl = (env: Record<string, string | undefined> = process.env) =>
  env.TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';

let brokerAnswers: boolean | undefined;
/** Whether something accepts TCP connections at the broker's address (looked at once per process). */
function brokerUp(url: string): boolean {
  if (brokerAnswers !== undefined) return brokerAnswers;
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'mqtts:' ? 8883 : 1883));
  const probe = `require('net').connect(${port}, ${JSON.stringify(u.hostname)}).on('connect', () => process.exit(0)).on('error', () => process.exit(1))`;
  brokerAnswers =
    spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore', timeout: 3000 }).status === 0;
  return brokerAnswers;
}

const PG_COMMAND = 'npm run test:pg';
const REDIS_COMMAND = `TEST_REDIS_URL=redis://127.0.0.1:6379 ${PG_COMMAND}`;

/** Why `need` is not available in this run (undefined: it is). */
export function unavailable(
  need: Need,
  env: Record<string, string | undefined> = process.env,
): Skip | undefined {
  const only = env.TEST_BACKENDS?.split(',').map((b) => b.trim());
  const leftOut = (b: Need) => only !== undefined && !only.includes(b);
  switch (need) {
    case 'pglite':
      return leftOut('pglite')
        ? {
            reason: `the embedded database is left out (TEST_BACKENDS=${env.TEST_BACKENDS})`,
            howToRun: 'npm test',
          }
        : undefined;
    case 'postgres':
      if (!env.TEST_DATABASE_URL)
        return { reason: 'needs PostgreSQL (TEST_DATABASE_URL is not set)', howToRun: PG_COMMAND };
      return leftOut('postgres')
        ? {
            reason: `PostgreSQL is left out (TEST_BACKENDS=${env.TEST_BACKENDS})`,
            howToRun: `${PG_COMMAND} without TEST_BACKENDS`,
          }
        : undefined;
    case 'redis':
      return env.TEST_REDIS_URL
        ? undefined
        : { reason: 'needs Redis (TEST_REDIS_URL is not set)', howToRun: REDIS_COMMAND };
    case 'haproxy':
      return runs('haproxy', '-v')
        ? undefined
        : { reason: 'needs haproxy on PATH (apt-get install haproxy)', howToRun: REDIS_COMMAND };
    case 'mosquitto':
      return brokerUp(mqttUrl(env))
        ? undefined
        : {
            reason: `needs an MQTT broker at ${mqttUrl(env)} (apt-get install mosquitto; mosquitto -d -c /etc/mosquitto/mosquitto.conf)`,
            howToRun: 'mosquitto -d -c /etc/mosquitto/mosquitto.conf && npm test',
          };
    case 'patroni':
      return patroniMissing(env);
    case 'pg_dump':
      return runs('pg_dump', '--version') && runs('pg_restore', '--version')
        ? undefined
        : {
            reason: 'needs pg_dump and pg_restore on PATH (apt-get install postgresql-client)',
            howToRun: PG_COMMAND,
          };
  }
}

const FAILOVER_COMMAND = 'TEST_FAILOVER=1 npx vitest run test/operations/failover.test.ts';
export { PG_BIN_DIR };

/**
 * The database-failover suite builds a Patroni cluster (etcd, two PostgreSQL 15 nodes run as the
 * `postgres` user, HAProxy) and takes about a minute and a half: it runs when asked (TEST_FAILOVER=1, as
 * CI does) and everything it needs is here.
 */
function patroniMissing(env: Record<string, string | undefined>): Skip | undefined {
  const install = 'apt-get install -y patroni etcd-server haproxy postgresql-15';
  const missing = [
    ['patroni', '--version'],
    ['patronictl', '--help'],
    ['etcd', '--version'],
    ['haproxy', '-v'],
    [`${PG_BIN_DIR}/postgres`, '--version'],
  ]
    .filter(([program, flag]) => !runs(program, flag))
    .map(([program]) => program);
  if (missing.length)
    return { reason: `needs ${missing.join(', ')} (${install})`, howToRun: FAILOVER_COMMAND };
  if (process.getuid?.() !== 0 || !runs('id', 'postgres'))
    return {
      reason: 'runs PostgreSQL as the postgres user, so it must run as root with that user present',
      howToRun: `sudo ${FAILOVER_COMMAND}`,
    };
  if (env.TEST_FAILOVER !== '1')
    return {
      reason:
        'builds a database cluster and takes about a minute and a half: runs when asked (TEST_FAILOVER=1)',
      howToRun: FAILOVER_COMMAND,
    };
  return undefined;
}

/** Why a suite that needs all of `needs` cannot run here (undefined: it can). */
export function skipOf(needs: Need[]): Skip | undefined {
  const missing = needs.map((n) => unavailable(n)).filter((s): s is Skip => s !== undefined);
  if (!missing.length) return undefined;
  // The Redis command sets the PostgreSQL URL too (npm run test:pg): it runs whatever is missing.
  const redis = missing.find((s) => s.howToRun === REDIS_COMMAND);
  return {
    reason: missing.map((s) => s.reason).join('; '),
    howToRun: (redis ?? missing[0]).howToRun,
  };
}

/**
 * describe() when everything in `needs` is available; otherwise describe.skip(), with the reason
 * and the command that runs it noted on the suite for the summary of the run.
 */
export function describeWith(
  needs: Need[],
  name: string,
  fn: () => void,
  notes: Omit<SuiteNotes, 'skipped' | 'database'> = {},
): void {
  const skipped = skipOf(needs);
  const database = needs.find((n) => n === 'pglite' || n === 'postgres');
  const collector = (skipped ? describe.skip : describe)(name, fn);
  const meta = collector.suite?.meta as SuiteNotes | undefined;
  if (meta) Object.assign(meta, notes, database && { database }, skipped && { skipped });
}
