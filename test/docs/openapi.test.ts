import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestContext } from '../helper.js';
import { ROOT } from '../operations/process.js';
import { loadDocument, operationsOf, runBin, type OpenApiDocument } from './tools.js';

// The served document is what integrators generate clients from: it must lint clean, name every
// operation and every DTO, and say which routes need no token. It does not depend on the database,
// so this suite runs on the embedded one only.

const PUBLIC = ['getHealth', 'getOpenApiDocument', 'issueToken'];

describe('OpenAPI document', () => {
  let ctx: TestContext;
  let doc: OpenApiDocument;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    ctx = await startApp('pglite', { demo: false });
    doc = await loadDocument(ctx.app);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ctx?.close();
  });

  it('references every component somewhere (the stream events from x-event-data)', () => {
    const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components ?? {});
    const names = Object.keys((doc.components as { schemas?: object } | undefined)?.schemas ?? {});
    const unused = names.filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    expect(unused).toEqual([]);
    const stream = JSON.stringify(doc.paths['/v1/stream']);
    for (const dto of [
      'StreamSnapshotDto',
      'StreamReadingDto',
      'StreamLogsDto',
      'StreamAlarmDto',
      'StreamConfigDto',
      'StreamEdgeDto',
    ])
      expect(stream).toContain(`#/components/schemas/${dto}`);
  });

  it('passes redocly lint (recommended rules, redocly.yaml) without errors or warnings', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const run = await runBin('redocly', [
      'lint',
      file,
      '--config',
      join(ROOT, 'redocly.yaml'),
      '--format=json',
    ]);
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map(
      (p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(run.code).toBe(0);
  });

  it('gives every operation a unique, readable operationId', () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThanOrEqual(80);
    const missing = ops
      .filter(({ op }) => !op.operationId)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(missing, 'operations without an operationId').toEqual([]);
    const ids = ops.map(({ op }) => op.operationId!);
    expect(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      'operationIds used twice',
    ).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
    const byRoute = Object.fromEntries(
      ops.map(({ method, path, op }) => [`${method.toUpperCase()} ${path}`, op.operationId]),
    );
    expect(byRoute).toMatchObject({
      'GET /health': 'getHealth',
      'POST /token': 'issueToken',
      'GET /v1/sites': 'listSites',
      'GET /v1/config/sensors/{sensorId}': 'getSensorRegisters',
      'GET /v1/config/updates/sensors/{sensorId}/light': 'getSensorRegisterUpdatesLight',
      'GET /v1/config/site/light': 'getSiteConfigLight',
      'GET /v1/config/site/compact': 'getSiteCompactConfig',
      'GET /v1/config/updates/site/compact': 'getSiteCompactConfigUpdates',
      'GET /v1/config/updates/site/tanks': 'getSiteTankUpdates',
      'POST /v1/edge/logs/sensor': 'uploadSensorLog',
      'POST /v1/edge/logs/sensor/batch': 'uploadSensorLogBatch',
      'POST /v1/edge/readings/meter/batch': 'uploadMeterReadingBatch',
      'POST /v1/edge/logs/generic': 'uploadGenericLogs',
      'POST /v1/edge/readings/generic': 'uploadGenericReadings',
      'POST /v1/sensors/logs/load': 'loadSensorSummaries',
      'POST /v1/edge/alarms/resolve': 'resolveAlarms',
    });
  });

  it('names its server, license and every tag it uses', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.info.license?.name).toBeTruthy();
    const declared = new Set(doc.tags!.filter((t) => t.description).map((t) => t.name));
    const used = new Set(operationsOf(doc).flatMap(({ op }) => op.tags ?? []));
    expect(
      [...used].filter((t) => !declared.has(t)),
      'tags without a description',
    ).toEqual([]);
  });

  it('marks /health, /openapi.json and /token public (security: []), every other operation bearer, each explicitly', () => {
    for (const { path, op } of operationsOf(doc)) {
      expect(op.security, path).toEqual(PUBLIC.includes(op.operationId!) ? [] : [{ bearer: [] }]);
    }
    expect(
      operationsOf(doc)
        .filter(({ op }) => op.security?.length === 0)
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(PUBLIC);
  });

  it('describes itself (/openapi.json), leaves the /docs page out; both answer without a token', async () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
    expect(doc.paths['/openapi.json'].get).toMatchObject({
      operationId: 'getOpenApiDocument',
      security: [],
      responses: {
        '200': { content: { 'application/json': { schema: { $ref: expect.any(String) } } } },
      },
    });
    for (const url of ['/openapi.json', '/docs/', '/docs/json']) {
      expect((await ctx.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
  });

  it('describes every answer: the status and what the operation gives, never the generator\'s "Default Response"', () => {
    const vague: string[] = [];
    for (const { path, method, op } of operationsOf(doc))
      for (const [code, response] of Object.entries(
        (op as { responses: Record<string, { description: string }> }).responses,
      ))
        if (!response.description || response.description === 'Default Response')
          vague.push(`${method} ${path} ${code}`);
    expect(vague).toEqual([]);
    const sensor = operationsOf(doc).find(
      (o) => o.path === '/v1/config/sensors/{sensorId}' && o.method === 'get',
    )!;
    expect((sensor.op as any).responses['200'].description).toMatch(/^OK: \S/);
  });

  it('lists 413 and 415 on every operation that takes a body', () => {
    const missing = operationsOf(doc)
      .filter(({ op }) => (op as any).requestBody)
      .filter(({ op }) => !(op as any).responses['413'] || !(op as any).responses['415'])
      .map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
    expect(operationsOf(doc).filter(({ op }) => (op as any).requestBody).length).toBeGreaterThan(
      20,
    );
  });

  it('declares a 4xx answer on every operation but getHealth and getOpenApiDocument (which have none; redocly.yaml)', () => {
    const without = operationsOf(doc).filter(
      ({ op }) => !Object.keys(op.responses).some((s) => s.startsWith('4')),
    );
    expect(without.map(({ op }) => op.operationId).sort()).toEqual([
      'getHealth',
      'getOpenApiDocument',
    ]);
  });

  it('gives every JSON body and answer a named component, with the names the interface uses', () => {
    const schemas = doc.components.schemas;
    const named = (s: { $ref?: string; type?: string; items?: { $ref?: string } }) =>
      s.$ref ?? (s.type === 'array' ? s.items?.$ref : undefined);
    const anonymous: string[] = [];
    for (const { op } of operationsOf(doc)) {
      const bodies = [
        ['request', op.requestBody?.content['application/json']] as const,
        ...Object.entries(op.responses).map(
          ([status, r]) => [status, r.content?.['application/json']] as const,
        ),
      ];
      for (const [what, media] of bodies) {
        if (!media) continue;
        const ref = named(media.schema);
        if (!ref) anonymous.push(`${op.operationId} ${what}`);
        else expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
      }
    }
    expect(anonymous).toEqual([]);
    for (const name of [
      'SensorLogDto',
      'UploadResponseDto',
      'SiteConfigDto',
      'SiteConfigDtoLight',
      'IssueTokenDto',
      'IssueTokenResponseDto',
      'Site',
      'SensorConfigDto',
      'BatchSensorReadingsDto',
      'SensorLogSummaryDto',
      'AlarmDto',
      'MultiSiteAlarmsDto',
      'MultiSiteAlarmsResolveDto',
      'TransactionLogDto',
      'ImagesPayloadDto',
      'ErrorBody',
    ]) {
      expect(schemas[name], name).toBeDefined();
    }
    const byId = Object.fromEntries(operationsOf(doc).map(({ op }) => [op.operationId, op]));
    expect(byId.uploadSensorLogBatch.requestBody!.content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/SensorLogDto' },
      maxItems: expect.any(Number),
      description: expect.any(String),
    });
    expect(byId.getSiteConfig.responses['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/SiteConfigDto',
    });
    expect(byId.resolveAlarms.requestBody!.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/MultiSiteAlarmsResolveDto',
    });
    // A role left unconfigured is null: the nullable use of a named schema keeps saying so, in a
    // form that admits null (`nullable` beside an allOf would not: the allOf still wants an object).
    const role = (
      schemas.MeterRegistersDto.properties as Record<string, { additionalProperties: unknown }>
    ).meterRegisters.additionalProperties;
    expect(role).toEqual({
      anyOf: [
        { $ref: '#/components/schemas/Register' },
        { type: 'object', nullable: true, enum: [null] },
      ],
    });
    const ajv = new Ajv({ strict: false, validateSchema: false });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    ajv.addSchema({ components: doc.components }, 'doc');
    const validate = ajv.compile({ $ref: 'doc#/components/schemas/MeterRegistersDto' });
    expect(validate({ meterRegisters: { Reset: null }, sensorRegisters: [] })).toBe(true);
    expect(validate({ meterRegisters: { Reset: 'a register id' }, sensorRegisters: [] })).toBe(
      false,
    );
  });

  it('names every object inside the DTOs of alarm management, bodies and answers (no anonymous nested object)', () => {
    const schemas = doc.components.schemas as Record<string, Schema>;
    type Schema = {
      $ref?: string;
      type?: string;
      title?: string;
      properties?: Record<string, Schema>;
      items?: Schema;
      anyOf?: Schema[];
    };
    const inline = (s: Schema | undefined, path: string): string[] => {
      if (!s || s.$ref) return [];
      const here = s.type === 'object' && s.properties && !s.title ? [path] : [];
      return [
        ...here,
        ...Object.entries(s.properties ?? {}).flatMap(([k, v]) => inline(v, `${path}.${k}`)),
        ...inline(s.items, `${path}[]`),
        ...(s.anyOf ?? []).flatMap((v, i) => inline(v, `${path}|${i}`)),
      ];
    };
    const alarmRoutes = operationsOf(doc).filter(({ path }) => /^\/v1\/(alarms\/|me$)/.test(path));
    expect(alarmRoutes.length).toBeGreaterThanOrEqual(7);
    const refs = new Set<string>();
    const collect = (s: Schema | undefined) => {
      if (!s) return;
      if (s.$ref) {
        const name = s.$ref.replace('#/components/schemas/', '');
        if (refs.has(name)) return;
        refs.add(name);
        collect(schemas[name]);
      }
      Object.values(s.properties ?? {}).forEach(collect);
      collect(s.items);
      (s.anyOf ?? []).forEach(collect);
    };
    for (const { op } of alarmRoutes) {
      collect(op.requestBody?.content['application/json']?.schema as Schema);
      for (const [status, r] of Object.entries(op.responses))
        if (status.startsWith('2')) collect(r.content?.['application/json']?.schema as Schema);
    }
    for (const name of ['AlarmActionEntryDto', 'AlarmKpisWindowDto', 'AlarmRuleDto', 'MeDto'])
      expect(refs, name).toContain(name);
    expect([...refs].flatMap((name) => inline({ ...schemas[name], title: name }, name))).toEqual(
      [],
    );
  });

  it('leaves request validation as it was (only the document is rewritten)', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/token', payload: { clientId: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([expect.objectContaining({ path: '/clientSecret' })]);
  });
});
