import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../operations/process.js';

// The layout rule is checked, not remembered: an engine that reaches into HTTP is refused by lint.
// Each case is linted as if it were a file of an engine (or of a route), with the repository's own
// eslint.config.js; only the import rule is asked for, so the type-aware rules need no project.

const lint = async (filePath: string, code: string, rule = 'no-restricted-imports') => {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false, project: null } },
    },
    ruleFilter: ({ ruleId }) => ruleId === rule,
  });
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
};

describe('lint: engines stay free of HTTP', () => {
  it.each([
    [
      'src/telemetry/bad.ts',
      "import type { FastifyReply } from 'fastify';\nexport type R = FastifyReply;\n",
    ],
    [
      'src/stream/bad.ts',
      "import { fastifySSE } from '@fastify/sse';\nexport const p = fastifySSE;\n",
    ],
    [
      'src/sites/bad.ts',
      "import { siteRoutes } from '../routes/v1/sites/index.js';\nexport const r = siteRoutes;\n",
    ],
    [
      'src/alarms/bad.ts',
      "import { registerErrorHandling } from '../plugins/errors.js';\nexport const e = registerErrorHandling;\n",
    ],
  ])('%s is refused', async (file, code) => {
    const problems = await lint(file, code);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^no-restricted-imports: /);
  });

  it.each([
    [
      'src/routes/v1/sites/ok.ts',
      "import type { FastifyReply } from 'fastify';\nexport type R = FastifyReply;\n",
    ],
    [
      'src/plugins/ok.ts',
      "import type { FastifyInstance } from 'fastify';\nexport type I = FastifyInstance;\n",
    ],
    [
      'src/telemetry/ok.ts',
      "import { badRequest } from '../errors.js';\nexport const b = badRequest;\n",
    ],
  ])('%s is allowed', async (file, code) => {
    expect(await lint(file, code)).toEqual([]);
  });
});

describe("lint: routes use the request's database", () => {
  const rule = 'no-restricted-syntax';
  it.each([
    ['src/routes/v1/sites/bad.ts', 'export const f = (app: any) => app.db.query("SELECT 1");\n'],
    [
      'src/routes/v1/alarms/bad.ts',
      'export const f = (app: any) => { const { db } = app; return db; };\n',
    ],
  ])('%s is refused', async (file, code) => {
    const problems = await lint(file, code, rule);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/request\.db/);
  });

  it('request.db in a route, and app.db outside the routes, are allowed', async () => {
    expect(
      await lint(
        'src/routes/v1/sites/ok.ts',
        'export const f = (request: any) => request.db;\n',
        rule,
      ),
    ).toEqual([]);
    expect(await lint('src/app-ok.ts', 'export const f = (app: any) => app.db;\n', rule)).toEqual(
      [],
    );
  });
});
