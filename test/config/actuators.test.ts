import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { parseScalePoints } from '../../src/config/load-site.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DEMO, demoDoc, get, HEAVY, IDS } from './fixture.js';

// Actuator entries: ScalePoints parsed from the stored JSON ([] when unset or unparseable), the
// light form without the heavy fields, and children grouped under their own actuator.

describe('parseScalePoints', () => {
  it('parses an array of {F, V} numbers and nothing else', () => {
    expect(parseScalePoints('[{"F":0,"V":4},{"F":100,"V":20.5}]')).toEqual([
      { F: 0, V: 4 },
      { F: 100, V: 20.5 },
    ]);
    expect(parseScalePoints('[{"F":1,"V":2,"extra":3}]')).toEqual([{ F: 1, V: 2 }]);
    expect(parseScalePoints('[]')).toEqual([]);
    for (const bad of [
      null,
      undefined,
      '',
      'garbage',
      '{"F":1,"V":2}',
      '[{"F":1}]',
      '[{"F":"1","V":2}]',
      '[1,2]',
      '[null]',
      '"[]"',
      42,
    ])
      expect(parseScalePoints(bad), String(bad)).toEqual([]);
  });
});

const VARIANTS: [string, unknown, unknown[]][] = [
  [
    'array',
    [
      { F: 0, V: 1 },
      { F: 100, V: 9 },
    ],
    [
      { F: 0, V: 1 },
      { F: 100, V: 9 },
    ],
  ],
  [
    'stored JSON string',
    '[{"F":10,"V":2.5},{"F":90,"V":7}]',
    [
      { F: 10, V: 2.5 },
      { F: 90, V: 7 },
    ],
  ],
  ['garbage text', 'not json at all', []],
  ['an object, not an array', '{"F":1,"V":2}', []],
  ['a point without V', '[{"F":1}]', []],
  ['null', null, []],
];

describeEachBackend('configuration actuators', (backend) => {
  let ctx: TestContext;
  let token: string;
  const ACT = 10650;
  const fetch = async (url: string) => {
    const { status, body } = await get(ctx, url, token);
    expect(status, url).toBe(200);
    return body;
  };

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    token = await ctx.token('*');
    const base = demoDoc().actuators.find((a) => a.SiteActuatorID === IDS.actuator)!;
    const actuator = {
      ...base,
      SiteActuatorID: ACT,
      Name: 'Outlet Valve',
      Latitude: null,
      CustomIconURL: 'https://example.test/valve.svg',
      SensorScalings: VARIANTS.map(([, points], i) => ({
        SiteActuatorSensorScalingID: ACT * 10 + i,
        SiteActuatorID: ACT,
        SiteSensorID: IDS.sensor,
        Active: i % 2 === 0,
        ScalePoints: points,
      })),
      SensorTriggers: [2, 1].map((n) => ({
        ...base.SensorTriggers[0],
        SiteActuatorID: ACT,
        SiteSensorID: IDS.sensor + n,
        TopAlarmActionActiveTime: n * 10,
      })),
      TankGroupConnections: [],
    };
    await importDocument(ctx.db, { actuators: [actuator] });
  });
  afterAll(async () => ctx?.close());

  it('parses ScalePoints as stored: an array, a JSON string, and [] for anything unparseable or unset', async () => {
    const body = await fetch('/v1/config/site/actuators?siteId=1');
    expect(body.map((e: any) => e.actuator.SiteActuatorID)).toEqual([IDS.actuator, ACT]);
    const entry = body[1];
    expect(entry.sensorScalings.map((s: any) => s.SiteActuatorSensorScalingID)).toEqual(
      VARIANTS.map((_, i) => ACT * 10 + i),
    );
    VARIANTS.forEach(([label, , expected], i) =>
      expect(entry.sensorScalings[i].ScalePoints, label).toEqual(expected),
    );
    // Children stay with their actuator, triggers in the order given.
    expect(
      entry.sensorTriggers.map((t: any) => [t.SiteSensorID, t.TopAlarmActionActiveTime]),
    ).toEqual([
      [IDS.sensor + 2, 20],
      [IDS.sensor + 1, 10],
    ]);
    expect(entry.tankGroupConnections).toEqual([]);
    expect(body[0].sensorScalings).toHaveLength(1);
    expect(body[0].tankGroupConnections).toHaveLength(1);
  });

  it('reads what is stored, also JSON written there by other means, on every path', async () => {
    await ctx.db.query(
      `UPDATE actuator_sensor_scalings SET scale_points = $1 WHERE scaling_id = $2`,
      ['[{"F":5,"V":6}]', ACT * 10 + 2],
    );
    await ctx.db.query(
      `UPDATE actuator_sensor_scalings SET scale_points = $1 WHERE scaling_id = $2`,
      ['[{"F":5,', ACT * 10],
    );
    for (const url of [
      '/v1/config/site/actuators?siteId=1',
      '/v1/config/site?siteId=1',
      '/v1/config/site/compact?siteId=1',
      '/v1/config/updates/site/actuators/light?siteId=1&startDate=2099-01-01T00:00Z',
    ]) {
      const body = await fetch(url);
      const list = Array.isArray(body) ? body : body.actuators;
      const scalings = list.find((e: any) => e.actuator.SiteActuatorID === ACT).sensorScalings;
      expect(scalings[2].ScalePoints, url).toEqual([{ F: 5, V: 6 }]);
      expect(scalings[0].ScalePoints, url).toEqual([]);
    }
  });

  it('leaves the heavy fields and nulls out of light actuators, and keeps them in full ones', async () => {
    const full = (await fetch('/v1/config/site/actuators?siteId=1'))[1];
    const light = (await fetch('/v1/config/site/actuators/light?siteId=1'))[1];
    for (const f of HEAVY) expect(Object.keys(full.actuator), f).toContain(f);
    expect(full.actuator).toMatchObject({
      Latitude: null,
      SiteInOutDeviceID: null,
      CustomIconURL: 'https://example.test/valve.svg',
    });
    for (const f of [...HEAVY, 'SiteInOutDeviceID'])
      expect(Object.keys(light.actuator), f).not.toContain(f);
    expect(light.actuator).toMatchObject({
      SiteActuatorID: ACT,
      Name: 'Outlet Valve',
      Auto: true,
      Delete: false,
    });
    expect(Object.keys(light.sensorTriggers[0])).not.toContain('BottomAlarmActionActiveTime');
    expect(full.sensorTriggers[0].BottomAlarmActionActiveTime).toBeNull();
    // Compact keeps actuators whole, like the full form.
    expect((await fetch('/v1/config/site/compact?siteId=1')).actuators[1]).toEqual(full);
  });
});
