import { describe, expect, it } from 'vitest';
import { componentName, liftTitledSchemas } from '../../src/plugins/openapi-components.js';

// The rewrite of the served document on small documents: each rule once, where it could go wrong.

const body = (schema: object) => ({
  requestBody: { content: { 'application/json': { schema } } },
  responses: {},
});
const doc = (paths: Record<string, object>, schemas: Record<string, object> = {}) => ({
  openapi: '3.0.3',
  paths,
  components: { schemas },
});

const Log = {
  title: 'SensorLogDto',
  type: 'object',
  properties: { sensorID: { type: 'integer' } },
};

describe('liftTitledSchemas', () => {
  it('turns component names into [A-Za-z0-9] words', () => {
    expect(componentName('SensorLogDto')).toBe('SensorLogDto');
    expect(componentName('Sensor scaling (light)')).toBe('SensorScalingLight');
    expect(componentName('Error body')).toBe('ErrorBody');
  });

  it('lifts a titled schema, nested ones too, and puts one component behind every identical copy', () => {
    const batch = {
      title: 'BatchDto',
      type: 'object',
      properties: { logs: { type: 'array', items: { ...Log } } },
    };
    const out = liftTitledSchemas(
      doc({ '/a': { post: body({ ...Log }) }, '/b': { post: body(batch) } }),
    );
    expect(out.paths).toEqual({
      '/a': { post: body({ $ref: '#/components/schemas/SensorLogDto' }) },
      '/b': { post: body({ $ref: '#/components/schemas/BatchDto' }) },
    });
    expect(out.components.schemas).toEqual({
      SensorLogDto: Log,
      BatchDto: {
        ...batch,
        properties: {
          logs: { type: 'array', items: { $ref: '#/components/schemas/SensorLogDto' } },
        },
      },
    });
  });

  it('treats key order as no difference', () => {
    const reordered = { properties: Log.properties, type: 'object', title: 'SensorLogDto' };
    const out = liftTitledSchemas(
      doc({ '/a': { post: body(Log) }, '/b': { post: body(reordered) } }),
    );
    expect(Object.keys(out.components.schemas)).toEqual(['SensorLogDto']);
  });

  it('throws, naming both places, when two different schemas share a name', () => {
    const other = { ...Log, properties: { sensorId: { type: 'string' } } };
    expect(() =>
      liftTitledSchemas(doc({ '/a': { post: body(Log) }, '/b/{id}': { post: body(other) } })),
    ).toThrow(
      /two different schemas are both named SensorLogDto \(at #\/paths\/~1a\/post\/requestBody\/content\/application~1json\/schema and #\/paths\/~1b~1\{id}\/post/,
    );
    // ...also against a component that was there before (the error body).
    const taken = doc(
      { '/a': { post: body({ ...Log, title: 'Error body' }) } },
      { ErrorBody: { title: 'Error body', type: 'object' } },
    );
    expect(() => liftTitledSchemas(taken)).toThrow(/both named ErrorBody/);
  });

  it('keeps a nullable use nullable: the $ref or null, in a form OpenAPI 3.0 allows', () => {
    const out = liftTitledSchemas(
      doc({
        '/a': { post: body({ type: 'object', additionalProperties: { ...Log, nullable: true } }) },
        '/b': { post: body(Log) },
      }),
    );
    expect(out.paths['/a']).toEqual({
      post: body({
        type: 'object',
        additionalProperties: {
          anyOf: [
            { $ref: '#/components/schemas/SensorLogDto' },
            { type: 'object', nullable: true, enum: [null] },
          ],
        },
      }),
    });
    expect(out.components.schemas).toEqual({ SensorLogDto: Log });
  });

  it('leaves data alone (examples, defaults, enums), $refs, and the given document', () => {
    const example = { title: 'not a schema', value: 1 };
    const input = doc({
      '/a': {
        post: body({
          type: 'object',
          example,
          default: example,
          properties: { title: { type: 'string' }, r: { $ref: '#/x', title: 'X' } },
        }),
      },
    });
    const before = structuredClone(input);
    const out = liftTitledSchemas(input);
    expect(out.paths).toEqual(before.paths);
    expect(out.components.schemas).toEqual({});
    expect(input).toEqual(before);
  });
});
