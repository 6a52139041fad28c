import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { FastifyTypebox } from '../../src/app.js';
import { ROOT } from '../operations/process.js';

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command-line tool of node_modules/.bin (redocly, tsc) with node; resolves with its exit code, never rejects. */
export function runBin(bin: string, args: string[]): Promise<BinResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules', '.bin', bin), ...args],
      {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          NO_COLOR: '1',
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export type OpenApiDocument = {
  servers?: { url: string }[];
  info: { license?: { name: string } };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

export type Operation = {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};

type Schema = { $ref?: string; type?: string; items?: Schema };

/** The document as a client sees it: GET /openapi.json, without a token. */
export async function loadDocument(app: FastifyTypebox): Promise<OpenApiDocument> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (res.statusCode !== 200) {
    // The answer hides the cause (a 500 body says nothing); building it directly throws it, e.g. a name two schemas share.
    app.swagger();
    throw new Error(`/openapi.json: ${res.statusCode} ${res.body}`);
  }
  return res.json();
}

/** Every operation of the document with its method and path. */
export const operationsOf = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
