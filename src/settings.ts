import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

// The only place that reads process.env. Every setting of the service, checked once at start.
export const SettingsSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ default: './data' }),
  /** Seed a fresh database with demo data; unset: yes for the embedded database, no for PostgreSQL. */
  DEMO: Type.Optional(Type.Boolean()),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  TOKEN_TTL: Type.Integer({ minimum: 60, maximum: 86_400 * 7, default: 3600 }),
  BODY_LIMIT: Type.Integer({ minimum: 1024, default: 16 * 1024 * 1024 }),
  // Slow clients: the longest a client may take to send its request headers, and its whole request
  // (headers and body; a response, such as a stream, is not limited by it). Past them the connection is closed.
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 300_000 }),
  MAX_BATCH: Type.Integer({ minimum: 1, default: 10_000 }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 1200 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  // Behind a load balancer: whose X-Forwarded-For to believe for the client's address (the per-IP
  // rate limit, logs). Unset: nobody's. `true`: any peer's; a number: that many hops; else a
  // comma-separated list of the balancers' addresses or CIDR ranges.
  TRUST_PROXY: Type.Optional(
    Type.String({ pattern: '^(true|[0-9]{1,2}|[0-9a-fA-F.:/]+(\\s*,\\s*[0-9a-fA-F.:/]+)*)$' }),
  ),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  // How long a verified client's record is reused before it is read again (disable takes effect after at most this).
  CLIENT_CACHE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  // Telemetry uploads: group commit of concurrent requests (off: one statement per request), the
  // longest a write may take before the request is answered 500, and how long an equipment id's
  // site is reused for the access check before it is read again.
  GROUP_COMMIT: Type.Boolean({ default: true }),
  // Every other database call of a request (connection included) ends within this, or the request
  // is answered 503 with retry-after (GET /health: within 1.5 s at most).
  QUERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  // A provisioning import over HTTP (POST /v1/admin/import) is one transaction and may be large.
  IMPORT_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 120_000 }),
  WRITE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  EQUIPMENT_CACHE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 5000 }),
  // Summary rollups: how often the background refresher looks for stale buckets (0: never; summaries
  // stay exact, reading stale buckets from the logs) and how many it takes per transaction.
  ROLLUP_REFRESH_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 1000 }),
  ROLLUP_BATCH: Type.Integer({ minimum: 1, maximum: 100_000, default: 2000 }),
  // While uploads keep waiting for a write slot, the refresher runs no cycle for this long (a burst's
  // grace), then works a fifth of the time until they stop waiting (0: no grace).
  ROLLUP_BUSY_GRACE_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 30_000 }),
  // Retention: logs of UTC months that ended more than this many days ago are removed (their rollups
  // stay); 0 keeps everything. A pass runs this often (an hour; shorter in tests).
  RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 0 }),
  RETENTION_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 86_400_000, default: 3_600_000 }),
  // Archive (docs/storage.md): each UTC day of logs that ended at least this many days ago is moved into
  // its compact archive form (2 at the least: a smaller value counts as 2); 0 archives nothing. A pass
  // runs this often (an hour; shorter in tests), the first a minute after start.
  ARCHIVE_AFTER_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 35 }),
  ARCHIVE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 86_400_000, default: 3_600_000 }),
  // Live stream (GET /v1/stream): how long events stay for replay after a reconnect, the comment
  // that keeps idle streams open, a subscriber's unsent bytes before it is disconnected, streams per
  // instance (503 beyond), and how often an instance looks for events when no wake-up came.
  STREAM_RETENTION_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 300_000 }),
  STREAM_HEARTBEAT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 15_000 }),
  STREAM_MAX_BUFFER: Type.Integer({ minimum: 4096, maximum: 1 << 30, default: 1 << 20 }),
  STREAM_MAX_SUBSCRIBERS: Type.Integer({ minimum: 0, maximum: 100_000, default: 1000 }),
  STREAM_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  // Prometheus metrics (GET /metrics, no token) on a listener of their own, never the public port:
  // its address (keep it private: loopback or an internal network) and port (0: no metrics at all).
  METRICS_HOST: Type.String({ default: '127.0.0.1' }),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
  // Edge devices over MQTT (docs/mqtt.md): off unless MQTT_URL is set (mqtt:// or mqtts://, user and
  // password in the URL, never logged). MQTT_HOST_ID names the Sparkplug host application and the
  // shared subscription group of the JSON topics; MQTT_CLIENT_ID is this instance's fixed client id
  // (its persistent session keeps unacknowledged JSON messages across a crash; default: the host id
  // and the machine's name, so set one per instance when several run on one machine). A gap in a
  // Sparkplug node's seq not filled within MQTT_REORDER_MS asks it to rebirth. MQTT_CA_FILE: a PEM
  // file of the authorities a mqtts:// broker's certificate is checked against (default: Node's).
  MQTT_URL: Type.Optional(Type.String({ pattern: '^mqtts?://' })),
  // Notifications (docs/alarms.md#notifications): email through SMTP_URL (smtp:// or smtps://, user
  // and password in it) from SMTP_FROM, with a link to the console when PUBLIC_URL is set; webhook
  // addresses that are loopback, link-local or private are refused unless inside NOTIFY_ALLOW_PRIVATE
  // (comma-separated CIDR ranges); the outbox and the steps are looked at every NOTIFY_POLL_MS.
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  SMTP_FROM: Type.String({ minLength: 3, maxLength: 320, default: 'site-monitor@localhost' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
  NOTIFY_ALLOW_PRIVATE: Type.Optional(
    Type.String({ pattern: '^[0-9a-fA-F.:]+/[0-9]{1,3}(\\s*,\\s*[0-9a-fA-F.:]+/[0-9]{1,3})*$' }),
  ),
  NOTIFY_POLL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  MQTT_HOST_ID: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', default: 'site-monitor' }),
  MQTT_CLIENT_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,100}$' })),
  MQTT_REORDER_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  // How long the broker keeps this instance's JSON session (its unacknowledged and queued messages)
  // while the instance is away: a week by default.
  MQTT_SESSION_EXPIRY_S: Type.Integer({ minimum: 0, maximum: 4_294_967_295, default: 604_800 }),
  MQTT_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  // Put before every topic (JSON and Sparkplug alike), e.g. `staging/`, for a broker shared by
  // several deployments (or test runs); empty (the default) for the topics of contract 14.
  MQTT_TOPIC_PREFIX: Type.String({ pattern: '^([A-Za-z0-9._-]+/)*$', default: '' }),
});

export type Settings = Static<typeof SettingsSchema>;

export class SettingsError extends Error {}

/** Reads settings from an env-like record; unknown keys are ignored. Throws SettingsError naming the bad key. */
export function loadSettings(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Settings> = {},
): Settings {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(SettingsSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '')
      raw[key] = key === 'DEMO' ? !['0', 'false', 'no', 'off'].includes(v.toLowerCase()) : v;
  }
  const withDefaults = Value.Default(SettingsSchema, Value.Convert(SettingsSchema, raw));
  const merged = { ...(withDefaults as object), ...overrides };
  const err = Value.Errors(SettingsSchema, merged).First();
  if (err)
    throw new SettingsError(`invalid setting ${err.path.slice(1) || '(root)'}: ${err.message}`);
  const settings = merged as Settings;
  // Node refuses a headers timeout longer than the whole request's.
  if (settings.HEADERS_TIMEOUT_MS > settings.REQUEST_TIMEOUT_MS)
    throw new SettingsError(
      'invalid setting HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS',
    );
  if (settings.METRICS_PORT && settings.METRICS_PORT === settings.PORT)
    throw new SettingsError(
      'invalid setting METRICS_PORT: must differ from PORT (0 turns metrics off)',
    );
  return settings;
}
