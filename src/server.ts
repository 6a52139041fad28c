import { buildApp } from './app.js';
import { SettingsError, loadSettings, type Settings } from './settings.js';
import { connect, type Database } from './db/index.js';
import { DataDirBusyError } from './db/lock.js';
import { createMetrics, serveMetrics, type MetricsListener } from './metrics.js';
import { gatherDemoStatistics, seedDemo } from './provisioning/seed.js';

type Credentials = NonNullable<Awaited<ReturnType<typeof seedDemo>>>;

/** When no request comes, the demo data's statistics are gathered this long after the server listens. */
const STATISTICS_AFTER_MS = 5_000;

async function main() {
  const settings = loadSettings();
  // Milliseconds of each step of the start before the server listens, logged once it does.
  const timings: Record<string, number> = {};
  const db = await connect(settings, timings);
  const demo = settings.DEMO ?? !settings.DATABASE_URL;
  const credentials = demo ? await seedDemo(db, timings) : undefined;
  try {
    await start(settings, db, credentials, timings);
  } catch (err) {
    // The demo client exists from here on and its secret is shown only once: a start that fails
    // after seeding still shows it, so the next start (which seeds nothing) can be signed in to.
    if (credentials) process.stdout.write(demoBanner(credentials, settings.PORT, false));
    await db.close().catch(() => undefined);
    throw err;
  }
}

/** The demo client's credentials and how to use them; `started` says whether the server is up. */
function demoBanner(credentials: Credentials, port: number, started: boolean): string {
  const consoleUrl = `http://localhost:${port}/console/`;
  const { clientId, clientSecret } = credentials;
  return (
    (started
      ? `\n  Demo data loaded. Demo client (an admin of every site; shown only now, keep it):\n`
      : `\n  Demo data loaded, but the server did not start (the reason follows). Demo client\n` +
        `  (an admin of every site; shown only now, keep it for the next start):\n`) +
    `    clientId:     ${clientId}\n    clientSecret: ${clientSecret}\n` +
    `  Console:      ${consoleUrl}  (sign in with the client ID and secret above)\n` +
    `  Get a token:  curl -s -X POST http://localhost:${port}/token -H 'content-type: application/json' ` +
    `-d '{"clientId":"${clientId}","clientSecret":"${clientSecret}"}'\n` +
    `  API docs:     http://localhost:${port}/docs\n` +
    `  Lost it? Stop the server and run: npm run -s site-monitor -- client rotate-secret ${clientId}\n` +
    `  (it prints a new secret), or, from another admin client: POST /v1/admin/clients/${clientId}/secret\n\n`
  );
}

async function start(
  settings: Settings,
  db: Database,
  credentials: Credentials | undefined,
  timings: Record<string, number>,
) {
  const building = performance.now();
  const metrics = settings.METRICS_PORT ? createMetrics() : undefined;
  const app = await buildApp(settings, { db, metrics });
  // The demo data's statistics (or those a start that stopped left due): gathered once the server has
  // answered its first request, or STATISTICS_AFTER_MS after it listens if none came. The embedded
  // database holds this thread while it analyzes, so not before: the first answer would wait for it.
  let statistics: Promise<unknown> | undefined;
  let statisticsTimer: NodeJS.Timeout | undefined = undefined;
  const gatherStatistics = () => {
    if (statistics || closing) return;
    clearTimeout(statisticsTimer);
    const gathering = performance.now();
    statistics = gatherDemoStatistics(db).then(
      (done) => {
        if (done)
          app.log.info(
            { ms: Math.round(performance.now() - gathering) },
            'demo data statistics gathered',
          );
      },
      (err) =>
        app.log.warn({ err }, 'demo data statistics not gathered (the next start tries again)'),
    );
  };
  let listening = false;
  app.addHook('onResponse', async () => {
    if (listening) gatherStatistics();
  });
  app.addHook('onClose', async () => {
    clearTimeout(statisticsTimer);
    await statistics;
    await db.close();
  });
  let metricsListener: MetricsListener | undefined;
  // Scrapes stop when shutdown begins, before the database closes.
  app.addHook('preClose', async () => metricsListener?.close());

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const timer = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    timer.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await listen(app, settings, metrics, (listener) => (metricsListener = listener));
  } catch (err) {
    // Background work stops and the database closes before the process exits with the reason.
    await app.close().catch(() => undefined);
    throw err;
  }
  timings.listen = Math.round(performance.now() - building);
  app.log.info({ ms: timings }, 'started: milliseconds of each step');
  listening = true;
  statisticsTimer = setTimeout(gatherStatistics, STATISTICS_AFTER_MS);
  statisticsTimer.unref();
  // Shown once, on the console only: the database keeps just a hash of the secret.
  process.stdout.write(
    credentials
      ? demoBanner(credentials, settings.PORT, true)
      : `\n  Console: http://localhost:${settings.PORT}/console/  (sign in with an API client's ID and secret)\n\n`,
  );
}

/** Takes the metrics port, then the public one; throws when either cannot be had. */
async function listen(
  app: Awaited<ReturnType<typeof buildApp>>,
  settings: Settings,
  metrics: ReturnType<typeof createMetrics> | undefined,
  onMetrics: (listener: MetricsListener) => void,
) {
  if (metrics) {
    // Before the public port: a metrics port that cannot be taken stops the start.
    const listener = await serveMetrics(
      metrics.registry,
      settings.METRICS_HOST,
      settings.METRICS_PORT,
      (err) => app.log.error({ err }, 'metrics listener failed'),
    ).catch((err: NodeJS.ErrnoException) => {
      throw new SettingsError(
        `cannot serve metrics on ${settings.METRICS_HOST}:${settings.METRICS_PORT} (${err.code ?? err.message}): ` +
          'set METRICS_HOST or METRICS_PORT (0 turns metrics off)',
      );
    });
    onMetrics(listener);
    app.log.info({ url: listener.url }, 'Prometheus metrics served');
  }
  await app.listen({ port: settings.PORT, host: settings.HOST });
}

main().catch((err) => {
  const known = err instanceof SettingsError || err instanceof DataDirBusyError;
  process.stderr.write(`site-monitor: ${known ? err.message : (err?.stack ?? String(err))}\n`);
  process.exit(1);
});
