import { hostname } from 'node:os';
import type { MqttClient } from 'mqtt';
import type { Settings } from '../settings.js';
import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';
import type { TelemetryService } from '../telemetry/service.js';
import { endConnection, openConnection } from './connection.js';
import {
  JsonTopics,
  jsonSubscriptions,
  NotStored,
  type JsonAnswer,
  type JsonResult,
} from './json.js';
import { SparkplugHost } from './sparkplug/host.js';
import { HostLease } from './lease.js';

// The service's side of MQTT (contract 14), on when MQTT_URL is set. Every instance reads the JSON
// topics, through a shared subscription so that the instances split them, on connections with
// persistent sessions whose PUBACK follows the commit. The instance that holds the host lease is
// also the Sparkplug host application, on a connection of its own (its will says it went offline).

/** MQTT.js handles one message of a connection at a time while its PUBACK waits for the commit: a few connections let commits overlap. */
const JSON_CONNECTIONS_PG = 4;
/** Reason codes of a PUBACK that refuses a message (MQTT 5): stored nothing, do not send it again. */
const REFUSED: Record<number, number> = { 400: 153, 403: 135, 404: 131, 413: 153 };

export interface MqttServiceOptions {
  db: Database;
  settings: Settings;
  telemetry: TelemetryService;
  log: Logger;
  /** Each message by what became of it (the metrics). */
  onMessage?: (result: JsonResult) => void;
  /** Events were stored (the live stream looks for them). */
  onCommit: () => void;
}

export interface MqttStatus {
  /** Every connection of this instance is up. */
  connected: boolean;
  /** This instance is the Sparkplug host application now. */
  sparkplugHost: boolean;
}

export class MqttService {
  private readonly json: JsonTopics;
  private readonly clients: MqttClient[] = [];
  private readonly lease: HostLease;
  private host: SparkplugHost | undefined;
  private closing = false;
  private readonly clientId: string;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  /** Connections whose subscription the broker has granted (since their last connect). */
  private readonly subscribed = new Set<MqttClient>();

  constructor(private readonly o: MqttServiceOptions) {
    const { settings } = o;
    this.json = new JsonTopics(o.telemetry, settings);
    this.clientId =
      settings.MQTT_CLIENT_ID ??
      `${settings.MQTT_HOST_ID}-${hostname().replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 100);
    this.lease = new HostLease(o.db, settings.MQTT_HOST_ID, this.clientId, {
      log: o.log,
      onChange: (held) => (held ? this.becomeHost() : void this.stopHost()),
    });
  }

  /** The Sparkplug host, while this instance is it. */
  get sparkplugHost(): SparkplugHost | undefined {
    return this.host;
  }

  /** The JSON topics' handler. */
  get jsonTopics(): JsonTopics {
    return this.json;
  }

  status(): MqttStatus {
    const host = this.host?.client;
    return {
      connected:
        this.clients.length > 0 &&
        this.clients.every((c) => c.connected && this.subscribed.has(c)) &&
        (!host || host.connected),
      sparkplugHost: this.host !== undefined,
    };
  }

  start(): void {
    const { settings, log } = this.o;
    const count = this.o.db.kind === 'pglite' ? 1 : JSON_CONNECTIONS_PG;
    for (let i = 0; i < count; i++)
      this.clients.push(
        openConnection({
          url: settings.MQTT_URL!,
          clientId: `${this.clientId}-j${i}`,
          clean: false,
          sessionExpirySeconds: settings.MQTT_SESSION_EXPIRY_S,
          caFile: settings.MQTT_CA_FILE,
          log,
          name: `JSON topics (${i + 1}/${count})`,
          customHandleAcks: (topic, payload, packet, done) =>
            void this.onJson(topic, payload, packet, done),
          onConnect: (client) => {
            this.subscribed.delete(client);
            client.once('close', () => this.subscribed.delete(client));
            client.subscribe(
              jsonSubscriptions(settings.MQTT_HOST_ID, settings.MQTT_TOPIC_PREFIX),
              { qos: 1 },
              (err) => {
                if (err)
                  log.warn({ err: err.message }, 'mqtt: subscribing to the JSON topics failed');
                else this.subscribed.add(client);
              },
            );
          },
        }),
      );
    this.lease.start();
  }

  /** A JSON message: stored (or refused), answered on its response topic, then acknowledged. */
  private async onJson(
    topic: string,
    payload: Buffer,
    packet: { properties?: { responseTopic?: string; correlationData?: Buffer } },
    done: (code: number) => void,
  ): Promise<void> {
    // Shutting down: left unacknowledged, the broker delivers it again after the restart.
    if (this.closing) return;
    this.inFlight++;
    try {
      let answer: JsonAnswer | undefined;
      for (let attempt = 0; !answer; attempt++) {
        try {
          answer = await this.json.handle(topic, payload);
        } catch (err) {
          if (!(err instanceof NotStored))
            this.o.log.error({ err, topic }, 'mqtt: a JSON message failed');
          // Not acknowledged: the broker keeps it in our session; we try again until we stop.
          if (this.closing) return;
          if (attempt === 0)
            this.o.log.warn({ topic }, 'mqtt: a JSON message could not be stored; trying again');
          await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)).unref());
          if (this.closing) return;
        }
      }
      this.o.onMessage?.(answer.result);
      if (answer.statusCode !== 201)
        this.o.log.info(
          {
            topic,
            statusCode: answer.statusCode,
            error: (answer.body as { message?: string }).message,
          },
          'mqtt: a JSON message was refused',
        );
      const responseTopic = packet.properties?.responseTopic;
      const client = this.clients.find((c) => c.connected);
      if (responseTopic && client && !/[#+]/.test(responseTopic))
        client.publish(
          responseTopic,
          JSON.stringify(
            answer.statusCode === 201
              ? answer.body
              : { ...answer.body, statusCode: answer.statusCode },
          ),
          {
            qos: 1,
            properties: {
              correlationData: packet.properties?.correlationData,
              contentType: 'application/json',
            },
          },
          () => {},
        );
      done(answer.statusCode === 201 ? 0 : (REFUSED[answer.statusCode] ?? 128));
    } finally {
      if (--this.inFlight === 0) this.idleWaiters.splice(0).forEach((w) => w());
    }
  }

  private becomeHost(): void {
    if (this.closing || this.host) return;
    this.o.log.info(
      { hostId: this.o.settings.MQTT_HOST_ID },
      'mqtt: this instance is the Sparkplug host',
    );
    const { db, settings, telemetry, log, onMessage, onCommit } = this.o;
    this.host = new SparkplugHost({ db, settings, telemetry, log, onMessage, onCommit });
  }

  private async stopHost(): Promise<void> {
    const host = this.host;
    this.host = undefined;
    if (host) {
      this.o.log.info({}, 'mqtt: this instance is no longer the Sparkplug host');
      await host.close();
    }
  }

  /** Stops taking messages; those being stored finish (and are acknowledged) first. */
  async close(): Promise<void> {
    this.closing = true;
    await this.lease.stop(async () => this.stopHost());
    if (this.inFlight) await new Promise<void>((r) => this.idleWaiters.push(r));
    await Promise.all(this.clients.map((c) => endConnection(c)));
  }
}
