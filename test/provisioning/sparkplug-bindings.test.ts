import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument, ImportError } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';

// sparkplugMetrics in the provisioning document and the admin import (contract 14, 3, 12): checked
// like every list (unknown equipment or field: the first bad record named, nothing changed),
// counted, and within an administrator's sites.

const binding = (over: Record<string, unknown> = {}) => ({
  GroupID: 'plant',
  EdgeNodeID: 'gw-1',
  DeviceID: 'rtu-1',
  MetricName: 'Tank/Level',
  SiteTankGroupID: 10501,
  Field: 'entryTankLevel',
  ...over,
});

describeEachBackend('Sparkplug metric bindings', (backend) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp(backend);
  });
  afterAll(async () => ctx?.close());
  const rows = () =>
    ctx.db.query(
      `SELECT group_id, edge_node_id, device_id, metric_name, kind, equipment_id, field FROM sparkplug_metrics ORDER BY metric_name`,
    );

  it('imports bindings, counts them, and a second import changes nothing', async () => {
    const doc = {
      sparkplugMetrics: [
        binding(),
        binding({
          DeviceID: null,
          MetricName: 'Line/Pressure',
          SiteTankGroupID: undefined,
          SiteSensorID: 10100,
          Field: undefined,
        }),
      ],
    };
    expect((await importDocument(ctx.db, doc)).sparkplugMetrics).toEqual({
      received: 2,
      changed: 2,
    });
    expect(await rows()).toEqual([
      {
        group_id: 'plant',
        edge_node_id: 'gw-1',
        device_id: '',
        metric_name: 'Line/Pressure',
        kind: 'sensor',
        equipment_id: 10100,
        field: 'value',
      },
      {
        group_id: 'plant',
        edge_node_id: 'gw-1',
        device_id: 'rtu-1',
        metric_name: 'Tank/Level',
        kind: 'tank',
        equipment_id: 10501,
        field: 'entryTankLevel',
      },
    ]);
    expect((await importDocument(ctx.db, doc)).sparkplugMetrics).toEqual({
      received: 2,
      changed: 0,
    });
  });

  it('names the first bad binding and changes nothing', async () => {
    const before = await rows();
    const fails = async (b: Record<string, unknown>) =>
      importDocument(ctx.db, { sparkplugMetrics: [binding({ MetricName: 'new' }), b] }).then(
        () => undefined,
        (err: ImportError) => err.message,
      );
    expect(await fails(binding({ SiteTankGroupID: 999_999 }))).toBe(
      'sparkplugMetrics[1].SiteTankGroupID: tank 999999 does not exist',
    );
    expect(await fails(binding({ Field: 'flowRate' }))).toMatch(
      /^sparkplugMetrics\[1\]\.Field: flowRate is not a field of a tank group/,
    );
    expect(await fails(binding({ SiteSensorID: 10100 }))).toMatch(
      /^sparkplugMetrics\[1\]: must name exactly one of/,
    );
    expect(
      await fails(binding({ SiteSensorID: 10100, SiteTankGroupID: undefined, Field: 'level' })),
    ).toMatch(/^sparkplugMetrics\[1\]\.Field: level is not a field of a sensor/);
    expect(await fails(binding({ MetricName: 'new' }))).toMatch(
      /^sparkplugMetrics\[1\]\.MetricName: metric new is already bound/,
    );
    expect(await fails(binding({ GroupID: 'a/b' }))).toMatch(/^sparkplugMetrics\[1\]\.GroupID/);
    expect(await rows()).toEqual(before);
  });

  it('answers the admin import 400 naming the record, and 403 beyond the admin’s sites', async () => {
    const admin = await ctx.token('*', { admin: true, clientId: 'spb-admin' });
    const limited = await ctx.token([2], { admin: true, clientId: 'spb-limited' });
    const post = (token: string, body: unknown) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/admin/import',
        headers: bearer(token),
        payload: body as object,
      });
    const bad = await post(admin, {
      sparkplugMetrics: [binding({ SitePumpID: 5, SiteTankGroupID: undefined, Field: 'pressure' })],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ details: [{ path: '/sparkplugMetrics/0/SitePumpID' }] });
    expect(
      (await post(limited, { sparkplugMetrics: [binding({ MetricName: 'x' })] })).statusCode,
    ).toBe(403);
    const ok = await post(admin, { sparkplugMetrics: [binding({ MetricName: 'y' })] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().sparkplugMetrics).toEqual({ received: 1, changed: 1 });
  });
});
