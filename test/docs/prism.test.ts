import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigner } from 'fast-jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, testSettings, type TestContext } from '../helper.js';
import { siteOne, type SiteOne } from '../hygiene/routes-fixture.js';
import { freePort, ROOT, waitFor } from '../operations/process.js';
import {
  moreExamples,
  refusals,
  validExamples,
  type Caller,
  type Example,
} from './prism-requests.js';
import { loadDocument, operationsOf, type OpenApiDocument } from './tools.js';

// Every answer must be what the served document says, judged by a tool we did not write: Stoplight
// Prism's validation proxy (prism proxy <document> <service> --errors=false) stands between the
// client and the service and reports, in the sl-violations header of each answer, where the request
// or the answer breaks the document. One valid request for every operation of the document, then
// the main refusals of a representative set: no answer may break the document, and no request
// may but those made bad on purpose. The table of requests is test/docs/prism-requests.ts. The
// answers come from the database, so this runs once per backend (PGlite; PostgreSQL too in CI).

interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

interface Outcome {
  label: string;
  status: number;
  violations: Violation[];
  /** The header when Prism cut it short ("Too many violations! …"). */
  truncated?: string;
}

describeEachBackend('answers through Prism proxy', (backend) => {
  let ctx: TestContext;
  let doc: OpenApiDocument;
  let dir: string;
  let prism: ChildProcess | undefined;
  let prismLog = '';
  let base: string;
  let one: SiteOne;
  const tokens = {} as Record<Exclude<Caller, 'none' | 'short'>, string>;
  const shortToken = () =>
    createSigner({ key: testSettings().JWT_SECRET!, algorithm: 'HS256', expiresIn: 3000 })({
      sub: 'owner',
      jti: randomUUID(),
    });

  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 2, imagesPerSite: 2 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    tokens.owner = await ctx.token('*', { clientId: 'owner', admin: true, cameraIds: '*' });
    tokens.foreign = await ctx.token([2], {
      clientId: 'foreign',
      admin: true,
      cameraIds: [20701, 20702],
    });
    for (const role of ['viewer', 'edge'] as const)
      tokens[role] = await ctx.token('*', { clientId: role, cameraIds: '*', role });
    await ctx.token([1], { clientId: 'prism-login' });
    one = await siteOne(ctx, tokens.owner);
    doc = await loadDocument(ctx.app);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const upstream = `http://127.0.0.1:${(ctx.app.server.address() as { port: number }).port}`;

    dir = mkdtempSync(join(tmpdir(), 'prism-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules', '.bin', 'prism'),
        'proxy',
        file,
        upstream,
        '--errors=false',
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--verboseLevel',
        'warn',
      ],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prism = child;
    child.stdout!.on('data', (d) => (prismLog = (prismLog + d).slice(-20_000)));
    child.stderr!.on('data', (d) => (prismLog = (prismLog + d).slice(-20_000)));
    let exited = false;
    child.on('exit', () => (exited = true));
    await waitFor(async () => {
      if (exited) throw new Error(`prism exited: ${prismLog}`);
      const res = await fetch(`${base}/health`);
      return res.status === 200 ? true : undefined;
    }, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}; prism said: ${prismLog}`);
    });
  }, 120_000);

  afterAll(async () => {
    if (prism && prism.exitCode === null) {
      const gone = new Promise((resolve) => prism!.once('exit', resolve));
      prism.kill('SIGTERM');
      await gone;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
    await ctx?.close();
  });

  /** Sends the example for the operation at method + path through Prism; the status and violations of the answer. */
  async function send(method: string, path: string, ex: Example, label: string): Promise<Outcome> {
    const url = new URL(
      path.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (ex.params?.[name] === undefined) throw new Error(`${label}: no value for {${name}}`);
        return encodeURIComponent(String(ex.params[name]));
      }),
      base,
    );
    for (const [k, v] of Object.entries(ex.query ?? {})) url.searchParams.set(k, String(v));
    const caller = ex.caller ?? 'owner';
    const headers: Record<string, string> = {
      // The proxy decompresses the answer but passes its content-encoding on: ask for none.
      'accept-encoding': 'identity',
      ...(caller === 'none'
        ? {}
        : { authorization: `Bearer ${caller === 'short' ? shortToken() : tokens[caller]}` }),
      ...(ex.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...ex.headers,
    };
    const res = await fetch(url, {
      method: method.toUpperCase(),
      headers,
      // A string is sent as it is (a body that is not JSON on purpose).
      body:
        ex.body === undefined || typeof ex.body === 'string' ? ex.body : JSON.stringify(ex.body),
      signal: AbortSignal.timeout(15_000),
    });
    await res.arrayBuffer();
    const header = res.headers.get('sl-violations');
    if (!header) return { label, status: res.status, violations: [] };
    if (!header.startsWith('['))
      return { label, status: res.status, violations: [], truncated: header.slice(0, 2000) };
    return { label, status: res.status, violations: JSON.parse(header) as Violation[] };
  }

  const describeViolation = (o: Outcome, v: Violation) =>
    `${o.label} [${o.status}]: ${(v.location ?? []).join('.')} ${v.message}`;

  it('answers one valid request for every operation of the document as the document says', async () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThanOrEqual(85);
    const examples = validExamples(one, 1);
    const missing = ops
      .filter(({ op }) => !examples[op.operationId!])
      .map(({ method, path, op }) => `${op.operationId} (${method.toUpperCase()} ${path})`);
    expect(missing, 'operations of the document without an example request').toEqual([]);
    const ids = new Set(ops.map(({ op }) => op.operationId));
    expect(
      Object.keys(examples).filter((id) => !ids.has(id)),
      'examples for operations the document no longer has',
    ).toEqual([]);

    // Each operation once, and again for each other answer type it offers by Accept (text/csv).
    const requests = ops.flatMap(({ method, path, op }) => {
      const ex = examples[op.operationId!];
      const label = `${op.operationId} (${method.toUpperCase()} ${path})`;
      const types = Object.entries(op.responses)
        .filter(([status]) => status.startsWith('2'))
        .flatMap(([, r]) => Object.keys(r.content ?? {}));
      const alternatives = ex.headers?.accept
        ? []
        : types.filter((t) => t !== 'application/json' && types.includes('application/json'));
      return [
        { method, path, ex, label },
        ...alternatives.map((accept) => ({
          method,
          path,
          ex: { ...ex, headers: { ...ex.headers, accept } },
          label: `${label} as ${accept}`,
        })),
      ];
    });
    const byId = new Map(ops.map((o) => [o.op.operationId!, o]));
    for (const { operationId, what, ...ex } of moreExamples()) {
      const op = byId.get(operationId);
      if (!op) throw new Error(`${operationId}: not an operation of the document`);
      const label = `${operationId} (${op.method.toUpperCase()} ${op.path}), ${what}`;
      requests.push({ method: op.method, path: op.path, ex, label });
    }
    const problems: string[] = [];
    for (const { method, path, ex, label } of requests) {
      const o = await send(method, path, ex, label);
      if (ex.status ? o.status !== ex.status : o.status < 200 || o.status > 299)
        problems.push(`${o.label}: status ${o.status}, expected ${ex.status ?? '2xx'}`);
      if (o.truncated) problems.push(`${o.label}: ${o.truncated}`);
      for (const v of o.violations) problems.push(describeViolation(o, v));
    }
    expect(problems, 'answers or requests that break the document').toEqual([]);
  }, 60_000);

  it('answers the main refusals (400, 401, 403, 404; 406 and 415 once) as the document says', async () => {
    const byId = new Map(operationsOf(doc).map((o) => [o.op.operationId!, o]));
    const problems: string[] = [];
    const cases = refusals(one);
    expect(cases.length).toBeGreaterThan(20);
    for (const c of cases) {
      const op = byId.get(c.operationId);
      if (!op) {
        problems.push(`${c.operationId}: not an operation of the document`);
        continue;
      }
      const o = await send(
        op.method,
        op.path,
        c,
        `${c.operationId} (${op.method.toUpperCase()} ${op.path}), ${c.what}`,
      );
      if (o.status !== c.status)
        problems.push(`${o.label}: status ${o.status}, expected ${c.status}`);
      if (o.truncated) problems.push(`${o.label}: ${o.truncated}`);
      for (const v of o.violations)
        if (v.location?.[0] !== 'request' || !c.badInput) problems.push(describeViolation(o, v));
    }
    expect(problems, 'refusals that break the document').toEqual([]);
  }, 60_000);
});
