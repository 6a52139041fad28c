import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { sha256Hex } from '../../src/images/store.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { importable, readZip, testImages, unzipTest, type TestImage } from './fixture.js';

const TICKETS = '/v1/images/tickets';
const MOTION = '/v1/images/motion-capture';
const EXT: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/x-icon': 'ico',
};

describeEachBackend('image bundles', (backend) => {
  let ctx: TestContext;
  let all: string;
  let images: TestImage[];
  const post = (url: string, token: string, uuids: unknown) =>
    ctx.app.inject({ method: 'POST', url, headers: bearer(token), payload: { uuids } });
  const of = (kind: string, site?: number) =>
    images.filter((m) => m.Kind === kind && (site === undefined || m.SiteID === site));

  beforeAll(async () => {
    ctx = await startApp(backend);
    images = testImages();
    await importDocument(ctx.db, importable(images));
    all = await ctx.token('*', { cameraIds: '*' });
  });
  afterAll(async () => ctx?.close());

  async function expectBundle(url: string, wanted: TestImage[], uuids = wanted.map((m) => m.UUID)) {
    const res = await post(url, all, uuids);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="[a-z-]+-\d{8}T\d{6}Z\.zip"$/,
    );
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    const entries = await readZip(res.rawPayload);
    expect(entries.map((e) => e.name)).toEqual(
      wanted.map((m) => `${m.UUID}.${EXT[m.ContentType]}`),
    );
    entries.forEach((e, i) => expect(e.bytes.equals(wanted[i].bytes), e.name).toBe(true));
    expect(await unzipTest(res.rawPayload)).toMatch(/No errors detected/);
    return res;
  }

  describe('200', () => {
    it('bundles ticket images with exactly the imported bytes, in request order (a 2.5 MB one in slices)', async () => {
      const wanted = of('ticket').reverse();
      await expectBundle(TICKETS, wanted);
    });

    it('bundles motion-capture images of several sites and cameras', async () => {
      await expectBundle(MOTION, of('motion'));
    });

    it('sends the zip over a real socket with its exact Content-Length', async () => {
      const wanted = of('ticket', 1);
      const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const res = await fetch(`${address}${TICKETS}`, {
        method: 'POST',
        headers: { ...bearer(all), 'content-type': 'application/json' },
        body: JSON.stringify({ uuids: wanted.map((m) => m.UUID) }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('transfer-encoding')).toBeNull();
      const zip = Buffer.from(await res.arrayBuffer());
      expect(zip.length).toBe(Number(res.headers.get('content-length')));
      expect((await readZip(zip)).map((e) => e.bytes.length)).toEqual(
        wanted.map((m) => m.bytes.length),
      );
    });

    it('accepts UUIDs in any letter case and names entries in lower case', async () => {
      const wanted = of('ticket', 2);
      await expectBundle(
        TICKETS,
        wanted,
        wanted.map((m) => m.UUID.toUpperCase()),
      );
    });

    it("serves the demo data set's PNG ticket photos", async () => {
      const [row] = await ctx.db.query(
        `SELECT uuid::text AS uuid FROM images WHERE kind = 'ticket' AND uuid::text LIKE '7e1c%' LIMIT 1`,
      );
      const res = await post(TICKETS, all, [row.uuid]);
      const [entry] = await readZip(res.rawPayload);
      expect(entry.name).toBe(`${row.uuid}.png`);
      expect(entry.bytes.subarray(1, 4).toString()).toBe('PNG');
    });

    it('stores bytes once however many images or imports carry them', async () => {
      const shared = of('ticket').filter((m) => m.bytes.length === 30_000);
      expect(shared).toHaveLength(2);
      const count = async () =>
        (await ctx.db.query(`SELECT count(*)::int AS n FROM image_blobs`))[0].n;
      const [pair] = await ctx.db.query(
        `SELECT count(DISTINCT sha256)::int AS n FROM images WHERE uuid = ANY($1::uuid[])`,
        [shared.map((m) => m.UUID)],
      );
      expect(pair.n).toBe(1);
      const before = await count();
      const summary = await importDocument(ctx.db, importable(images));
      expect(summary.images.changed).toBe(0);
      expect(await count()).toBe(before);
      expect(before).toBe(
        (await ctx.db.query(`SELECT count(DISTINCT sha256)::int AS n FROM images`))[0].n,
      );
    });

    it('drops bytes that no image points at any more when an image is imported with new bytes', async () => {
      const m = { ...of('ticket', 2)[0], bytes: Buffer.from('new picture') };
      const old = of('ticket', 2)[0];
      const digest = async (b: Buffer) =>
        (
          await ctx.db.query(`SELECT 1 FROM image_blobs WHERE sha256 = decode($1, 'hex')`, [
            sha256Hex(b),
          ])
        ).length;
      expect(await digest(old.bytes)).toBe(1);
      await importDocument(ctx.db, importable([m]));
      expect(await digest(old.bytes)).toBe(0);
      await expectBundle(TICKETS, [m]);
      await importDocument(ctx.db, importable([old]));
      await expectBundle(TICKETS, [old]);
    });
  });

  describe('400', () => {
    it.each([
      ['a malformed UUID', ['not-a-uuid'], '/uuids/0'],
      ['a UUID with a bad character', ['aaaa0001-0000-4000-8000-00000000000g'], '/uuids/0'],
      ['an empty list', [], '/uuids'],
      [
        'a UUID listed twice',
        ['aaaa0001-0000-4000-8000-000000000001', 'aaaa0001-0000-4000-8000-000000000001'],
        '/uuids',
      ],
      [
        'a UUID listed twice in two letter cases',
        ['aaaa0001-0000-4000-8000-000000000001', 'AAAA0001-0000-4000-8000-000000000001'],
        '/uuids/1',
      ],
      [
        'more than 500 UUIDs',
        Array.from(
          { length: 501 },
          (_, i) => `cccc0000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        ),
        '/uuids',
      ],
      ['no list', undefined, '/uuids'],
      ['a list of numbers', [1, 2], '/uuids/0'],
    ])('%s', async (_, uuids, path) => {
      for (const url of [TICKETS, MOTION]) {
        const res = await post(url, all, uuids);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json().details[0].path).toBe(path);
      }
    });
  });

  describe('404', () => {
    it('answers 404 for an unknown UUID, naming it', async () => {
      const unknown = 'dddd0000-0000-4000-8000-000000000001';
      const res = await post(TICKETS, all, [of('ticket')[0].UUID, unknown]);
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toContain(unknown);
      expect(res.json().details).toEqual([
        { path: '/uuids/1', message: 'not a known ticket image' },
      ]);
    });

    it('answers 404 for an image of the other kind', async () => {
      expect((await post(TICKETS, all, [of('motion')[0].UUID])).statusCode).toBe(404);
      expect((await post(MOTION, all, [of('ticket')[0].UUID])).statusCode).toBe(404);
    });

    it('keeps the message short when many UUIDs are unknown', async () => {
      const unknown = Array.from(
        { length: 400 },
        (_, i) => `eeee0000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      );
      const body = (await post(MOTION, all, unknown)).json();
      expect(body.statusCode).toBe(404);
      expect(body.message).toMatch(/and 397 more$/);
      expect(body.message.length).toBeLessThan(200);
      expect(body.details.length).toBeLessThanOrEqual(20);
    });

    it('checks existence before access: a client that reaches nothing gets 404 too', async () => {
      const none = await ctx.token([4]);
      expect(
        (
          await post(TICKETS, none, [
            of('ticket', 1)[0].UUID,
            'dddd0000-0000-4000-8000-000000000002',
          ])
        ).statusCode,
      ).toBe(404);
    });
  });

  describe('403', () => {
    it('refuses a bundle with an image of a site out of reach, as a whole, naming nothing', async () => {
      const site1 = await ctx.token([1], { cameraIds: '*' });
      const uuids = [of('ticket', 1)[0].UUID, of('ticket', 2)[0].UUID];
      const res = await post(TICKETS, site1, uuids);
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const message = res.json().message;
      for (const hidden of [...uuids, '2', 'Mentone']) expect(message).not.toContain(hidden);
      expect((await post(TICKETS, site1, [uuids[0]])).statusCode).toBe(200);
    });

    it('refuses motion images of a camera out of reach even when the site is reachable', async () => {
      const [gate, bay] = of('motion', 1);
      const gateOnly = await ctx.token([1, 2], { cameraIds: [10701] });
      expect((await post(MOTION, gateOnly, [gate.UUID])).statusCode).toBe(200);
      const res = await post(MOTION, gateOnly, [gate.UUID, bay.UUID]);
      expect(res.statusCode).toBe(403);
      expect(res.json().message).not.toContain('10702');
      const noCameras = await ctx.token([1]);
      expect((await post(MOTION, noCameras, [gate.UUID])).statusCode).toBe(403);
      // Ticket images need no camera.
      expect((await post(TICKETS, noCameras, [of('ticket', 1)[0].UUID])).statusCode).toBe(200);
    });
  });

  it('401 without a token', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: TICKETS,
      payload: { uuids: [of('ticket')[0].UUID] },
    });
    expect(res.statusCode).toBe(401);
  });

  describe('500', () => {
    const corrupt = async (m: TestImage, sql: string) => {
      await ctx.db.query(`UPDATE image_blobs SET ${sql} WHERE sha256 = decode($1, 'hex')`, [
        sha256Hex(m.bytes),
      ]);
    };
    const restore = (m: TestImage) =>
      ctx.db.query(
        `UPDATE image_blobs SET data = decode($1, 'base64') WHERE sha256 = decode($2, 'hex')`,
        [m.bytes.toString('base64'), sha256Hex(m.bytes)],
      );

    it.each([
      [
        'changed bytes of the same length',
        `data = overlay(data placing '\\x00ff'::bytea from 100)`,
      ],
      ['cut-off bytes', `data = substring(data from 1 for 1000)`],
      ['bytes of another image', `data = '\\x0102'::bytea`],
    ])('answers 500 with no zip for %s, decided before the first byte', async (_, sql) => {
      const [good, bad] = of('ticket', 1);
      await corrupt(bad, sql);
      try {
        const res = await post(TICKETS, all, [good.UUID, bad.UUID]);
        expect(res.statusCode).toBe(500);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json()).toEqual({
          statusCode: 500,
          error: 'Internal Server Error',
          message: expect.stringMatching(/could not be read/),
        });
        expect(res.rawPayload.subarray(0, 2).toString()).not.toBe('PK');
      } finally {
        await restore(bad);
      }
      await expectBundle(TICKETS, [good, bad]);
    });
  });
});
