import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yauzl from 'yauzl';

// Images of known bytes beside the demo data (sites 1-4; site s has transactions s*10000+1001…
// and cameras s*10000+701 and +702), and a real zip reader to check what a bundle holds.

export interface TestImage {
  UUID: string;
  Kind: 'ticket' | 'motion';
  SiteID: number;
  TransactionID?: number;
  CameraID?: number;
  ContentType: string;
  bytes: Buffer;
}

const uuid = (prefix: string, n: number) =>
  `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export function testImages(): TestImage[] {
  const shared = randomBytes(30_000); // one picture under two UUIDs: stored once
  const list: TestImage[] = [
    {
      UUID: uuid('aaaa0001', 1),
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: 11001,
      ContentType: 'image/jpeg',
      bytes: randomBytes(200_000),
    },
    // Larger than one read slice (64 KiB): streamed in 39 slices.
    {
      UUID: uuid('aaaa0001', 2),
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: 11002,
      ContentType: 'image/png',
      bytes: randomBytes(2_500_000),
    },
    {
      UUID: uuid('aaaa0001', 3),
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: 11002,
      ContentType: 'image/webp',
      bytes: shared,
    },
    {
      UUID: uuid('aaaa0001', 4),
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: 11003,
      ContentType: 'image/jpeg',
      bytes: shared,
    },
    {
      UUID: uuid('aaaa0001', 5),
      Kind: 'ticket',
      SiteID: 1,
      TransactionID: 11003,
      ContentType: 'image/x-icon',
      bytes: Buffer.from([7]),
    },
    {
      UUID: uuid('aaaa0002', 1),
      Kind: 'ticket',
      SiteID: 2,
      TransactionID: 21001,
      ContentType: 'image/jpeg',
      bytes: randomBytes(5_000),
    },
    {
      UUID: uuid('bbbb0001', 1),
      Kind: 'motion',
      SiteID: 1,
      TransactionID: 11001,
      CameraID: 10701,
      ContentType: 'image/jpeg',
      bytes: randomBytes(150_000),
    },
    {
      UUID: uuid('bbbb0001', 2),
      Kind: 'motion',
      SiteID: 1,
      CameraID: 10702,
      ContentType: 'image/png',
      bytes: randomBytes(1_100_000),
    },
    {
      UUID: uuid('bbbb0002', 1),
      Kind: 'motion',
      SiteID: 2,
      TransactionID: 21001,
      CameraID: 20701,
      ContentType: 'image/jpeg',
      bytes: randomBytes(9_000),
    },
  ];
  return list;
}

export const importable = (images: TestImage[]) => ({
  images: images.map(({ bytes, ...m }) => ({
    ...m,
    CapturedAt: '2026-05-01T10:00:00Z',
    DataBase64: bytes.toString('base64'),
  })),
});

/** Every entry of a zip, in order, read with yauzl (which checks each entry's CRC-32 and size). */
export function readZip(zip: Buffer): Promise<{ name: string; bytes: Buffer }[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true }, (err, file) => {
      if (err || !file) return reject(err);
      const out: { name: string; bytes: Buffer }[] = [];
      file.on('error', reject);
      file.on('end', () => resolve(out));
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const parts: Buffer[] = [];
          stream.on('data', (c: Buffer) => parts.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.push({ name: entry.fileName, bytes: Buffer.concat(parts) });
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}

/** `unzip -t` of the system on the zip: resolves with its output, rejects when it finds a fault. */
export async function unzipTest(zip: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bundle-'));
  try {
    const file = join(dir, 'bundle.zip');
    await writeFile(file, zip);
    const { stdout } = await promisify(execFile)('unzip', ['-t', file]);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
