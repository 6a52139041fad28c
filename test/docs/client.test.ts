import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { ROOT } from '../operations/process.js';
import { runBin, type BinResult } from './tools.js';

// What an integrator does: generate types from the served document with openapi-typescript, write a
// program against them with openapi-fetch, type-check it strictly, run it against a listening
// service. The @ts-expect-error lines fail the check if the generated types stop saying anything.

const PROGRAM = `import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api.js';

type UploadResponseDto = components['schemas']['UploadResponseDto'];

export async function run(baseUrl: string, clientId: string, clientSecret: string) {
  const open = createClient<paths>({ baseUrl });
  const refused = await open.POST('/token', { body: { clientId, clientSecret: 'wrong-secret' } });
  const refusedStatus: number | undefined = refused.error?.statusCode;

  const token = await open.POST('/token', { body: { clientId, clientSecret } });
  if (!token.data) throw new Error('token: ' + token.response.status);
  const tokenType: 'Bearer' = token.data.tokenType;
  const api = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + token.data.accessToken } });

  const sites = await api.GET('/v1/sites', { params: { query: { page: 1, perPage: 10 } } });
  if (!sites.data) throw new Error('sites: ' + sites.response.status);
  const site: components['schemas']['Site'] = sites.data.data[0];
  const siteId: number = sites.data.data[0].SiteID;
  // @ts-expect-error the field is SiteID
  void sites.data.data[0].SiteId;

  const config = await api.GET('/v1/config/site', { params: { query: { siteId } } });
  if (!config.data) throw new Error('config: ' + config.response.status);
  const configSiteId: number = config.data.site.SiteID;
  const sensorId: number = config.data.sensors[0].sensor.SiteSensorID;

  const log: components['schemas']['SensorLogDto'] = { sensorID: sensorId, value: 1.5, timestamp: '2026-01-01T00:00:00Z' };
  const uploads: UploadResponseDto[] = [];
  for (let i = 0; i < 2; i++) {
    const upload = await api.POST('/v1/edge/logs/sensor', { body: log });
    if (!upload.data) throw new Error('upload: ' + upload.response.status);
    uploads.push(upload.data);
  }
  return { refusedStatus, tokenType, siteId, siteName: site.Name, configSiteId, sensorId, uploads };
}

/** Never called: requests the types must refuse. */
export function misuses(api: Client<paths>) {
  // @ts-expect-error siteId is required
  void api.GET('/v1/config/site', { params: { query: {} } });
  // @ts-expect-error a sensor log needs its sensorID
  void api.POST('/v1/edge/logs/sensor', { body: { value: 1, timestamp: '2026-01-01T00:00:00Z' } });
  // @ts-expect-error uploads are POST only
  void api.GET('/v1/edge/logs/sensor');
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    skipLibCheck: true,
    noUnusedLocals: true,
  },
  files: ['program.ts'],
};

// Inside the repository, so the program resolves openapi-fetch from its node_modules; removed afterwards.
const dir = mkdtempSync(join(ROOT, '.openapi-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The document does not depend on the backend: generated and checked once, run against each.
let checked: Promise<BinResult> | undefined;

async function generateAndCheck(baseUrl: string): Promise<BinResult> {
  const doc = await (await fetch(`${baseUrl}/openapi.json`)).json();
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc)));
  writeFileSync(join(dir, 'program.ts'), PROGRAM);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  return runBin('tsc', ['-p', dir]);
}

describeEachBackend('a client generated from /openapi.json', (backend) => {
  let ctx: TestContext;
  let baseUrl: string;

  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: {
        sites: 2,
        sensorsPerSite: 2,
        metersPerSite: 1,
        pumpsPerSite: 1,
        tanksPerSite: 1,
        actuatorsPerSite: 1,
      },
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => ctx?.close());

  it('type-checks strictly (tsc --noEmit)', async () => {
    checked ??= generateAndCheck(baseUrl);
    const tsc = await checked;
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
  });

  it('gets a token, lists sites, reads a configuration and uploads a log', async () => {
    expect((await (checked ??= generateAndCheck(baseUrl))).code).toBe(0);
    await ctx.token('*', { clientId: 'generated', clientSecret: 'generated-secret-1' });
    const { run } = (await import(pathToFileURL(join(dir, 'program.ts')).href)) as {
      run: (baseUrl: string, id: string, secret: string) => Promise<Record<string, unknown>>;
    };
    const out = await run(baseUrl, 'generated', 'generated-secret-1');
    const [first] = await ctx.db.query<{ site_id: number; name: string }>(
      'SELECT site_id, name FROM sites ORDER BY site_id LIMIT 1',
    );
    expect(out).toEqual({
      refusedStatus: 401,
      tokenType: 'Bearer',
      siteId: first.site_id,
      siteName: first.name,
      configSiteId: first.site_id,
      sensorId: expect.any(Number),
      uploads: [
        { received: 1, stored: 1, duplicates: 0 },
        { received: 1, stored: 0, duplicates: 1 },
      ],
    });
  });
});
