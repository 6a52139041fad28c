import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../wait.js';
import { alarmsOf, importRules, secondsAgo } from '../alarms/rules-fixtures.js';
import { describeMqtt, gateway, mqttSuite, request } from './fixtures.js';

// Limit rules on data that arrives over MQTT (contract 16 with 14): evaluated like an upload's,
// visible within 2 s of the PUBACK of the sample that raised or cleared the alarm.

const SENSOR = 10100; // site 1 (test/telemetry/fixtures.ts)
const PUMP = 10401;

describeMqtt('alarm rules over MQTT', (backend) => {
  const t = mqttSuite(backend);
  let gw: MqttClient;
  const topic = (rest: string) => `${t.prefix}site-monitor/v1/sites/1/${rest}`;
  beforeAll(async () => {
    gw = await gateway();
    await importRules(t.ctx.db, [
      {
        AlarmRuleID: 1,
        SiteSensorID: SENSOR,
        Condition: 'above',
        Limit: 100,
        Deadband: 10,
        AlarmType: 'MQTT_HIGH',
      },
      {
        AlarmRuleID: 2,
        SitePumpID: PUMP,
        Field: 'frequency',
        Condition: 'below',
        Limit: 20,
        AlarmType: 'MQTT_SLOW',
      },
    ]);
  });
  afterAll(async () => gw?.endAsync());

  it('raises on logs from a JSON topic within 2 s of the answer, and clears below the deadband', async () => {
    const logs = [
      { sensorID: SENSOR, value: 90, timestamp: secondsAgo(30) },
      { sensorID: SENSOR, value: 120, timestamp: secondsAgo(29) },
    ];
    expect(await request(gw, topic('logs/sensor'), JSON.stringify(logs))).toMatchObject({
      stored: 2,
    });
    const answered = Date.now();
    await until(async () => (await alarmsOf(t.ctx.db, 'MQTT_HIGH')).length, 'the alarm');
    expect(Date.now() - answered).toBeLessThan(2000);
    expect(await alarmsOf(t.ctx.db, 'MQTT_HIGH')).toMatchObject([
      { source: 'rule', value: 120, resolved_at: null },
    ]);
    await request(
      gw,
      topic('logs/sensor'),
      JSON.stringify([{ sensorID: SENSOR, value: 95, timestamp: secondsAgo(28) }]),
    );
    await t.ctx.app.alarmRules.evaluator.settle();
    expect((await alarmsOf(t.ctx.db, 'MQTT_HIGH'))[0].resolved_at).toBeNull();
    await request(
      gw,
      topic('logs/sensor'),
      JSON.stringify([{ sensorID: SENSOR, value: 90, timestamp: secondsAgo(27) }]),
    );
    await until(async () => (await alarmsOf(t.ctx.db, 'MQTT_HIGH'))[0].resolved_at, 'the clear');
    expect((await alarmsOf(t.ctx.db, 'MQTT_HIGH'))[0].resolved_by).toBe('rule:1');
  });

  it('raises on readings from a JSON topic', async () => {
    const readings = [
      { sitePumpID: PUMP, frequency: 12.5, running: true, timestamp: secondsAgo(5) },
    ];
    expect(await request(gw, topic('readings/pump'), JSON.stringify({ readings }))).toMatchObject({
      stored: 1,
    });
    await until(async () => (await alarmsOf(t.ctx.db, 'MQTT_SLOW')).length, 'the alarm');
    expect(await alarmsOf(t.ctx.db, 'MQTT_SLOW')).toMatchObject([
      { source: 'rule', value: 12.5, equipment_id: PUMP },
    ]);
  });
});
