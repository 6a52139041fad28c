import fc from 'fast-check';
import { expect, it } from 'vitest';
import { encodePayload } from '../../src/mqtt/sparkplug/codec.js';
import { describeMqtt, mqttSuite } from './fixtures.js';

// Nothing a gateway publishes gets past the handlers: random bytes as a Sparkplug payload, random
// Sparkplug payloads and random JSON on the JSON topics are answered, counted or dropped, never thrown.

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const TYPES = ['NBIRTH', 'NDATA', 'NDEATH', 'DBIRTH', 'DDATA', 'DDEATH', 'STATE', 'NCMD', 'X'];

describeMqtt('MQTT handlers under random input', (backend) => {
  const t = mqttSuite(backend);
  const host = () => t.ctx.app.mqtt!.sparkplugHost!;
  const sparkplugTopic = fc
    .tuple(
      fc.constantFrom('g1', 'g/2', ''),
      fc.constantFrom(...TYPES),
      fc.constantFrom('n1', 'n2'),
      fc.option(fc.constantFrom('d1', 'd2')),
    )
    .map(([g, type, n, d]) => `${t.prefix}spBv1.0/${g}/${type}/${n}${d ? `/${d}` : ''}`);

  it('never throws on random bytes as a Sparkplug payload', () => {
    expect(host()).toBeDefined();
    fc.assert(
      fc.property(sparkplugTopic, fc.uint8Array({ maxLength: 300 }), (topic, bytes) => {
        host().handle(topic, Buffer.from(bytes));
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws on random Sparkplug payloads (any seq, alias, value, time)', () => {
    const metric = fc.record(
      {
        name: fc.constantFrom('bdSeq', 'Sensors/S0', 'Node Control/Rebirth', 'x'),
        alias: fc.nat(10),
        timestamp: fc.oneof(fc.nat(), fc.constant(8.64e15), fc.constant(Date.now())),
        datatype: fc.nat(40),
        historical: fc.boolean(),
        value: fc.oneof(
          fc.double(),
          fc.integer(),
          fc.boolean(),
          fc.string({ maxLength: 300 }),
          fc.constant(null),
        ),
      },
      { requiredKeys: ['value'] },
    );
    const payload = fc.record(
      { timestamp: fc.nat(), seq: fc.nat(300), metrics: fc.array(metric, { maxLength: 8 }) },
      { requiredKeys: ['metrics'] },
    );
    fc.assert(
      fc.property(sparkplugTopic, payload, (topic, p) => {
        let bytes: Uint8Array;
        try {
          bytes = encodePayload(p);
        } catch {
          return; // not encodable: not a payload anyone can send
        }
        host().handle(topic, Buffer.from(bytes));
      }),
      { numRuns: RUNS },
    );
  });

  it('answers random JSON on the JSON topics with a status, never a throw', async () => {
    const topic = fc
      .tuple(
        fc.constantFrom('1', '2', '0', 'x', '99999999999'),
        fc.constantFrom('logs', 'readings', 'other'),
        fc.constantFrom('sensor', 'meter', 'pump', 'tank', 'valve'),
      )
      .map(([site, role, kind]) => `${t.prefix}site-monitor/v1/sites/${site}/${role}/${kind}`);
    const body = fc.oneof(
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify([v])),
      fc
        .array(fc.record({ sensorID: fc.integer(), value: fc.double(), timestamp: fc.string() }), {
          maxLength: 5,
        })
        .map((v) => JSON.stringify(v)),
      fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    await fc.assert(
      fc.asyncProperty(topic, body, async (tp, text) => {
        const answer = await t.ctx.app.mqtt!.jsonTopics.handle(tp, Buffer.from(text));
        expect([201, 400, 403, 404, 413]).toContain(answer.statusCode);
      }),
      { numRuns: RUNS },
    );
  });
});
