import { afterAll, beforeAll, expect, it } from 'vitest';
import { redactUrl } from '../../src/mqtt/connection.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { freePort } from '../operations/process.js';
import { until } from '../wait.js';

// A broker that is not there: the service starts, serves, says so in /health (200), keeps trying,
// and never writes the broker's password in its logs.

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
      config: {
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
