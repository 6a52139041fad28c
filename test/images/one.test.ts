import { afterAll, beforeAll, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { importable, testImages, type TestImage } from './fixture.js';

// One image by its UUID (what the console shows as a thumbnail): the bundle's checks, the bytes unchanged.

describeEachBackend('one image', (backend) => {
  let ctx: TestContext;
  let images: TestImage[];
  let all: string;
  const get = (url: string, token: string) =>
    ctx.app.inject({ method: 'GET', url, headers: bearer(token) });
  const find = (kind: string, site: number) =>
    images.find((m) => m.Kind === kind && m.SiteID === site)!;

  beforeAll(async () => {
    ctx = await startApp(backend);
    images = testImages();
    await importDocument(ctx.db, importable(images));
    all = await ctx.token('*', { cameraIds: '*' });
  });
  afterAll(async () => ctx?.close());

  it('answers a ticket image with its bytes and content type, a large one whole', async () => {
    for (const m of images.filter((x) => x.Kind === 'ticket' && x.SiteID === 1).slice(0, 2)) {
      const res = await get(`/v1/images/tickets/${m.UUID.toUpperCase()}`, all);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe(m.ContentType);
      expect(Number(res.headers['content-length'])).toBe(m.bytes.length);
      expect(res.rawPayload.equals(m.bytes)).toBe(true);
      expect(res.headers['cache-control']).toMatch(/^private/);
    }
  });

  it('answers a motion image only to a client that reaches its camera', async () => {
    const m = find('motion', 1);
    expect((await get(`/v1/images/motion-capture/${m.UUID}`, all)).rawPayload.equals(m.bytes)).toBe(
      true,
    );
    const noCamera = await ctx.token([1], { cameraIds: [] });
    const res = await get(`/v1/images/motion-capture/${m.UUID}`, noCamera);
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain(m.UUID);
  });

  it('403 for another site, 404 for an unknown UUID or the other kind, 400 for a malformed one, 401 without token', async () => {
    const site2 = await ctx.token([2]);
    expect((await get(`/v1/images/tickets/${find('ticket', 1).UUID}`, site2)).statusCode).toBe(403);
    expect((await get(`/v1/images/tickets/${find('ticket', 2).UUID}`, site2)).statusCode).toBe(200);
    expect(
      (await get('/v1/images/tickets/00000000-0000-4000-8000-000000000000', all)).statusCode,
    ).toBe(404);
    expect((await get(`/v1/images/tickets/${find('motion', 1).UUID}`, all)).statusCode).toBe(404);
    const bad = await get('/v1/images/tickets/not-a-uuid', all);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().statusCode).toBe(400);
    expect(
      (await ctx.app.inject({ method: 'GET', url: `/v1/images/tickets/${find('ticket', 1).UUID}` }))
        .statusCode,
    ).toBe(401);
  });
});
