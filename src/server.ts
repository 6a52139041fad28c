import { buildApp } from './app.js';
import { SettingsError, loadSettings } from './settings.js';
import { connect } from './db/index.js';
import { DataDirBusyError } from './db/lock.js';
import { createMetrics, serveMetrics, type MetricsListener } from './metrics.js';
import { seedDemo } from './provisioning/seed.js';

async function main() {
  const settings = loadSettings();
  const db = await connect(settings);
  const demo = settings.DEMO ?? !settings.DATABASE_URL;
  const credentials = demo ? await seedDemo(db) : undefined;
  const metrics = settings.METRICS_PORT ? createMetrics() : undefined;
  const app = await buildApp(settings, { db, metrics });
  app.addHook('onClose', async () => db.close());
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

  if (metrics) {
    // Before the public port: a metrics port that cannot be taken stops the start.
    metricsListener = await serveMetrics(
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
    app.log.info({ url: metricsListener.url }, 'Prometheus metrics served');
  }
  await app.listen({ port: settings.PORT, host: settings.HOST });
  const consoleUrl = `http://localhost:${settings.PORT}/console/`;
  if (!credentials)
    process.stdout.write(
      `\n  Console: ${consoleUrl}  (sign in with an API client's ID and secret)\n\n`,
    );
  if (credentials) {
    // Shown once, on the console only: the database keeps just a hash of the secret.
    process.stdout.write(
      `\n  Demo data loaded. Demo client (an admin of every site; shown only now, keep it):\n` +
        `    clientId:     ${credentials.clientId}\n    clientSecret: ${credentials.clientSecret}\n` +
        `  Console:      ${consoleUrl}  (sign in with the client ID and secret above)\n` +
        `  Get a token:  curl -s -X POST http://localhost:${settings.PORT}/token -H 'content-type: application/json' ` +
        `-d '{"clientId":"${credentials.clientId}","clientSecret":"${credentials.clientSecret}"}'\n` +
        `  API docs:     http://localhost:${settings.PORT}/docs\n` +
        `  Lost it? Stop the server and run: npm run -s site-monitor -- client rotate-secret ${credentials.clientId}\n` +
        `  (it prints a new secret), or, from another admin client: POST /v1/admin/clients/${credentials.clientId}/secret\n\n`,
    );
  }
}

main().catch((err) => {
  const known = err instanceof SettingsError || err instanceof DataDirBusyError;
  process.stderr.write(`site-monitor: ${known ? err.message : (err?.stack ?? String(err))}\n`);
  process.exit(1);
});
