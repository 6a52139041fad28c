import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import type { Role, Source } from './telemetry/jobs.js';
import { TELEMETRY_KINDS, type TelemetryKind } from './equipment.js';

// The service's Prometheus metrics (contract §15): one registry per process, and the listener that
// serves it on a port of its own (METRICS_HOST:METRICS_PORT, never the public port, no token).
// Engines never see prom-client: they report through plain callbacks (TelemetryService's onStored),
// wired to the counters here; the HTTP histogram, the process's default metrics and the gauges read
// at scrape time are registered on the app by plugins/metrics.ts.
//
// Labels are bounded: kinds, types, sources and results are closed lists, routes are the router's
// patterns. No label ever holds an id, a client, a token or a URL.

export const MQTT_RESULTS = ['stored', 'ignored', 'malformed', 'rejected'] as const;
export type MqttResult = (typeof MQTT_RESULTS)[number];

export interface ServiceMetrics {
  readonly registry: Registry;
  /** Records a commit stored: `count` records of one kind, type (log or reading) and source. */
  ingested(kind: TelemetryKind, type: Role, source: Source, count: number): void;
  /** One MQTT message handled, by what became of it (for the MQTT transport). */
  mqttMessage(result: MqttResult): void;
  /** One notification delivery attempt, by channel type and what became of it. */
  notification(channel: 'webhook' | 'email', result: 'delivered' | 'retried' | 'failed'): void;
  /** Equipment-days the archive pass moved into the archive, or that failed and were set aside. */
  archived(kind: TelemetryKind, result: 'archived' | 'failed', count: number): void;
}

export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  const ingested = new Counter({
    name: 'site_monitor_ingested_records_total',
    help: 'Telemetry records stored (committed), by equipment kind, source and type (log or reading); duplicates not counted',
    labelNames: ['kind', 'source', 'type'] as const,
    registers: [registry],
  });
  const mqtt = new Counter({
    name: 'site_monitor_mqtt_messages_total',
    help: 'MQTT messages received, by result: stored, ignored, malformed or rejected',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const notifications = new Counter({
    name: 'site_monitor_notifications_total',
    help: 'Alarm notification delivery attempts, by channel type (webhook, email) and result (delivered, retried, failed)',
    labelNames: ['channel', 'result'] as const,
    registers: [registry],
  });
  const archive = new Counter({
    name: 'site_monitor_archive_days_total',
    help: 'Equipment-days of logs the archive pass handled, by equipment kind and result: archived, or failed (set aside until the next pass)',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  for (const kind of TELEMETRY_KINDS)
    for (const result of ['archived', 'failed']) archive.inc({ kind, result }, 0);
  for (const channel of ['webhook', 'email'])
    for (const result of ['delivered', 'retried', 'failed'])
      notifications.inc({ channel, result }, 0);
  // Every series exists from the start (at 0), so rates and alerts see the first increase.
  for (const result of MQTT_RESULTS) mqtt.inc({ result }, 0);
  for (const kind of TELEMETRY_KINDS)
    for (const type of ['log', 'reading'] as const)
      for (const source of ['http', 'mqtt'] as const) ingested.inc({ kind, source, type }, 0);
  return {
    registry,
    ingested: (kind, type, source, count) => ingested.inc({ kind, source, type }, count),
    mqttMessage: (result) => mqtt.inc({ result }),
    notification: (channel, result) => notifications.inc({ channel, result }),
    archived: (kind, result, count) => archive.inc({ kind, result }, count),
  };
}

export interface MetricsListener {
  /** http://host:port/metrics */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and HEAD) from the registry on host:port, in Prometheus' text format; any
 * other path is 404. Rejects when the port cannot be taken.
 */
export async function serveMetrics(
  registry: Registry,
  host: string,
  port: number,
  onError: (err: unknown) => void,
): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics')
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  // A scraper sends a short request: slow or half-open connections are dropped soon.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', onError);
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a scraper's keep-alive connection
      }),
  };
}
