import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { describeEachBackend, openTestDb, testSettings } from '../helper.js';
import type { Database } from '../../src/db/index.js';

// How the service serves a built console (a small stand-in build here; the real one is tested in a
// browser by test-browser/): the redirect, its files, the page for every bookmarkable path.

describeEachBackend('serving the console', (backend) => {
  const dir = mkdtempSync(join(tmpdir(), 'console-'));
  const script = 'console.log("console");'.repeat(50);
  let app: FastifyTypebox;
  let db: Database;
  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>site-monitor</title>');
    writeFileSync(join(dir, 'assets', 'index-abc.js'), script);
    writeFileSync(join(dir, 'assets', 'index-abc.js.gz'), gzipSync(script));
    db = await openTestDb(backend);
    app = await buildApp(testSettings(), { db, logger: false, consoleDir: dir });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers });

  it('redirects / to /console/', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/console/');
  });

  it('serves the page at /console/ and at every page path, never cached', async () => {
    for (const path of [
      '/console/',
      '/console/sites/3',
      '/console/charts?site=1&range=7d',
      '/console/alarms',
    ]) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<title>site-monitor</title>');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      // Counted per IP address like any request without a token.
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
  });

  it('serves hashed assets for good, gzipped to a browser that accepts it', async () => {
    const plain = await get('/console/assets/index-abc.js');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.body).toBe(script);
    expect(plain.headers['cache-control']).toContain('immutable');
    const zipped = await get('/console/assets/index-abc.js', { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.rawPayload.length).toBeLessThan(script.length / 5);
  });

  it('answers 404 for a missing file and keeps the API and the docs apart', async () => {
    const missing = await get('/console/assets/nope.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().statusCode).toBe(404);
    expect((await get('/console/../package.json')).statusCode).not.toBe(200);
    expect((await get('/v1/nope')).json().statusCode).toBe(404);
    expect((await get('/health')).statusCode).toBe(200);
    const doc = (await get('/openapi.json')).json();
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/console') || p === '/')).toBe(false);
  });
});
