import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Logger } from '../logger.js';

// One MQTT connection of the service: MQTT 5, reconnecting for ever with a growing pause (1 s,
// doubling to 30 s, back to 1 s once connected), errors logged and never thrown, so a broker that
// is down, refuses us or goes away never stops the service. The broker's URL is logged only
// without its password.

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

/** Connections being ended by us (their close is no news, and nothing reconnects them). */
const ending = new WeakSet<MqttClient>();

/** The URL without its password (what logs show). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

export interface ConnectionOptions {
  url: string;
  clientId: string;
  /** false: a persistent session (kept by the broker for `sessionExpirySeconds` while we are away). */
  clean: boolean;
  sessionExpirySeconds?: number;
  will?: IClientOptions['will'];
  customHandleAcks?: IClientOptions['customHandleAcks'];
  caFile?: string;
  log: Logger;
  /** What the logs call it. */
  name: string;
  /** After every (re)connection. */
  onConnect?: (client: MqttClient, sessionPresent: boolean) => void;
  onMessage?: (topic: string, payload: Buffer, packet: mqtt.IPublishPacket) => void;
}

export function openConnection(o: ConnectionOptions): MqttClient {
  const shown = redactUrl(o.url);
  const client = mqtt.connect(o.url, {
    protocolVersion: 5,
    clientId: o.clientId,
    clean: o.clean,
    reconnectPeriod: FIRST_RETRY_MS,
    connectTimeout: 10_000,
    keepalive: 30,
    // Our own QoS 1 messages wait for the connection instead of failing.
    queueQoSZero: false,
    properties: o.sessionExpirySeconds
      ? { sessionExpiryInterval: o.sessionExpirySeconds }
      : undefined,
    will: o.will,
    customHandleAcks: o.customHandleAcks,
    ca: o.caFile ? readFileSync(o.caFile) : undefined,
  });
  let wasConnected = false;
  let failures = 0;
  client.on('connect', (connack) => {
    // Small packets (acknowledgements, commands, responses) leave at once rather than wait for the
    // broker's acknowledgement of the previous ones (Nagle's algorithm; Node's sockets keep it on).
    const socket = client.stream as { setNoDelay?: (on: boolean) => void } | undefined;
    socket?.setNoDelay?.(true);
    failures = 0;
    client.options.reconnectPeriod = FIRST_RETRY_MS;
    wasConnected = true;
    o.log.info({ broker: shown, clientId: o.clientId }, `mqtt: ${o.name} connected`);
    o.onConnect?.(client, connack.sessionPresent);
  });
  client.on('close', () => {
    if (wasConnected && !ending.has(client))
      o.log.warn({ broker: shown }, `mqtt: ${o.name} disconnected; reconnecting`);
    wasConnected = false;
    failures++;
    client.options.reconnectPeriod = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1));
  });
  client.on('error', (err) => {
    // Every failure to connect repeats: logged at the first of a series and then every 10th.
    if (failures <= 1 || failures % 10 === 0)
      o.log.warn({ broker: shown, err: err.message }, `mqtt: ${o.name} connection failed`);
  });
  if (o.onMessage) client.on('message', o.onMessage);
  return client;
}

/** Ends a connection; `force`: without waiting for messages in flight (they are redelivered). */
export const endConnection = (client: MqttClient, force = false) =>
  new Promise<void>((resolve) => {
    ending.add(client);
    client.end(force, {}, () => resolve());
  });
