import { afterAll, beforeAll, expect, it } from 'vitest';
import { endConnection, openConnection, redactUrl } from '../../src/mqtt/connection.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { describeWith } from '../needs.js';
import { freePort } from '../operations/process.js';
import { until } from '../wait.js';
import { BROKER, unique } from './fixtures.js';

// A broker that is not there: the service starts, serves, says so in /health (200), keeps trying,
// and never writes the broker's password in its logs. Against the real broker: a connection that
// the service ends itself is not logged as lost, and nothing reconnects it.

it('shows an MQTT URL without its password', () => {
  expect(redactUrl('mqtts://gw:s3cret@broker.example:8883/x')).toBe(
    'mqtts://gw:***@broker.example:8883/x',
  );
  expect(redactUrl('mqtt://127.0.0.1:1883')).toBe('mqtt://127.0.0.1:1883');
  expect(redactUrl('not a url')).toBe('(an unparsable URL)');
});

describeEachBackend('MQTT without a broker', (backend) => {
  let ctx: TestContext;
  const lines: string[] = [];
  beforeAll(async () => {
    const port = await freePort(); // nothing listens there
    ctx = await startApp(backend, {
      settings: {
        MQTT_URL: `mqtt://gateway:pa55word-xyz@127.0.0.1:${port}`,
        MQTT_HOST_ID: 'absent',
        LOG_LEVEL: 'info',
      },
      logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } },
    });
  });
  afterAll(async () => ctx?.close());

  it('answers /health 200 with mqtt not connected, and logs the failure without the password', async () => {
    await until(
      () => lines.some((l) => l.includes('connection failed')),
      'the connection failure in the log',
    );
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', mqtt: { connected: false } });
    const all = lines.join('\n');
    expect(all).toContain('gateway:***@127.0.0.1');
    expect(all).not.toContain('pa55word-xyz');
  });
});

describeWith(['mosquitto'], 'MQTT connection ended by the service', () => {
  it('logs no "disconnected; reconnecting" when the service ends it, and does not reconnect', async () => {
    const lines: string[] = [];
    const log = (level: string) => (obj: object, msg: string) =>
      lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    const client = openConnection({
      url: BROKER,
      clientId: unique('end'),
      clean: true,
      log: { info: log('info'), warn: log('warn'), error: log('error') },
      name: 'probe',
    });
    await until(() => client.connected, 'the connection to the broker');
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await endConnection(client);
    await closed;
    expect(client.connected).toBe(false);
    expect(client.disconnected).toBe(true);
    expect(client.reconnecting).toBe(false);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([]);
    expect(lines.some((l) => l.includes('probe connected'))).toBe(true);
  });
});
