import { expect, it } from 'vitest';
import { describeEachBackend } from '../helper.js';
import { PUMP, SENSOR, suiteApp } from './fixtures.js';

// A generic upload checks each record with the service's one validator, so its 400 says what the
// route of that kind says about the same record, at the record's place in the body.

describeEachBackend('generic uploads: the same messages as the routes of each kind', (backend) => {
  const t = suiteApp(backend);
  const ts = '2026-01-05T10:00:00Z';

  it.each([
    ['a missing value', { sensorID: SENSOR, timestamp: ts }, 'sensor', '/value'],
    ['a mistyped value', { sensorID: SENSOR, value: '12', timestamp: ts }, 'sensor', '/value'],
    ['a mistyped field', { sitePumpID: PUMP, running: 'yes', timestamp: ts }, 'pump', '/running'],
  ])('%s', async (_, record, kind, field) => {
    const single = await t.post(`logs/${kind}`, record);
    const generic = await t.post('readings/generic', { readings: [record] });
    const logs = await t.post('logs/generic', [record]);
    expect(single.status).toBe(400);
    const message = (at: string) => single.body.details[0].message.replace(field, `${at}${field}`);
    expect(single.body.details[0].path).toBe(field);
    expect(logs.body.details[0]).toEqual({ path: `/0${field}`, message: message('/0') });
    expect(generic.body.details[0]).toEqual({
      path: `/readings/0${field}`,
      message: message('/readings/0'),
    });
    expect(logs.body.message).toBe(`validation failed: ${message('/0')}`);
  });
});
