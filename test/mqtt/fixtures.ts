import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll } from 'vitest';
import type { Settings } from '../../src/settings.js';
import { createMetrics, type ServiceMetrics } from '../../src/metrics.js';
import { describeWith, mqttUrl } from '../needs.js';
import { startApp, type Backend, type TestContext } from '../helper.js';
import { until } from '../wait.js';

// The MQTT suites: each on every database of the run, against the real broker (skipped, with the
// command that runs them, where there is none). Every suite has topics, host id and client ids of
// its own (MQTT_TOPIC_PREFIX), so suites running side by side on one broker never see each other.

export const BROKER = mqttUrl();

export const describeMqtt = (name: string, fn: (backend: Backend) => void) => {
  for (const backend of ['pglite', 'postgres'] as const)
    describeWith([backend, 'mosquitto'], `${name} [${backend}]`, () => fn(backend), {
      eachBackend: true,
    });
};

export const unique = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

/** Settings for one suite's service: its own host id, client id and topics. */
export function mqttSettings(overrides: Partial<Settings> = {}): Partial<Settings> {
  const id = unique('t');
  return {
    MQTT_URL: BROKER,
    MQTT_HOST_ID: id,
    MQTT_CLIENT_ID: `${id}-svc`,
    MQTT_TOPIC_PREFIX: `${id}/`,
    MQTT_REORDER_MS: 500,
    // The broker forgets a suite's sessions soon after it ends.
    MQTT_SESSION_EXPIRY_S: 300,
    ...overrides,
  };
}

/** The app with MQTT on, for a whole suite, once its connections are up and subscribed. */
export function mqttSuite(backend: Backend, overrides: Partial<Settings> = {}) {
  const t = {} as {
    ctx: TestContext;
    settings: Partial<Settings>;
    prefix: string;
    metrics: ServiceMetrics;
    /** site_monitor_mqtt_messages_total of a result. */
    counted(result: string): Promise<number>;
  };
  beforeAll(async () => {
    t.settings = mqttSettings(overrides);
    t.prefix = t.settings.MQTT_TOPIC_PREFIX!;
    t.metrics = createMetrics();
    t.counted = async (result) =>
      (
        await t.metrics.registry.getSingleMetric('site_monitor_mqtt_messages_total')!.get()
      ).values.find((v) => v.labels.result === result)?.value ?? 0;
    t.ctx = await startApp(backend, { settings: t.settings, metrics: t.metrics });
    await until(() => t.ctx.app.mqtt?.status().connected, 'the MQTT connections');
  });
  afterAll(async () => t.ctx?.close());
  return t;
}

/** A gateway's MQTT 5 connection (closed at the end of the suite). */
export async function gateway(): Promise<MqttClient> {
  return mqtt.connectAsync(BROKER, {
    protocolVersion: 5,
    clientId: unique('gw'),
    reconnectPeriod: 0,
  });
}

/** Publishes at QoS 1 with a response topic, and resolves with the answer published there. */
export async function request(
  client: MqttClient,
  topic: string,
  payload: string | Buffer,
): Promise<Record<string, unknown>> {
  const responseTopic = `${topic}/reply/${unique('r')}`;
  const correlation = randomBytes(8);
  await client.subscribeAsync(responseTopic, { qos: 1 });
  const answer = new Promise<Record<string, unknown>>((resolve) => {
    const on = (t: string, body: Buffer, packet: mqtt.IPublishPacket) => {
      if (t !== responseTopic) return;
      if (!packet.properties?.correlationData?.equals(correlation)) return;
      client.off('message', on);
      resolve(JSON.parse(body.toString()));
    };
    client.on('message', on);
  });
  await client.publishAsync(topic, payload, {
    qos: 1,
    properties: { responseTopic, correlationData: correlation },
  });
  const body = await answer;
  await client.unsubscribeAsync(responseTopic);
  return body;
}
