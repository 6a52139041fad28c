import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postWebhook } from '../../src/alarms/notify/webhook.js';
import { until } from '../wait.js';

// The webhook receiver of docs/alarms.md, run as written (its code block copied into a file and
// started with node), receiving what the service's own webhook code sends and signs.

const SECRET = 'a-channel-secret-of-16+';
const docs = readFileSync(new URL('../../docs/alarms.md', import.meta.url), 'utf8');
const section = docs.slice(docs.indexOf('### A webhook'));
const code = section.slice(
  section.indexOf('```js\n') + 6,
  section.indexOf('\n```', section.indexOf('```js\n')),
);

let dir: string;
let child: ChildProcess;
let out = '';
let url: string;
/** The receiver is on loopback: let the service's address check allow it, as NOTIFY_ALLOW_PRIVATE would. */
const allowed = new BlockList();
allowed.addSubnet('127.0.0.0', 8);

beforeAll(async () => {
  expect(code).toContain('createHmac');
  dir = mkdtempSync(join(tmpdir(), 'receiver-'));
  writeFileSync(join(dir, 'receiver.mjs'), code);
  child = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
    env: { ...process.env, SECRET, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const port = await until(() => /listening on (\d+)/.exec(out)?.[1], 'the receiver to listen');
  url = `http://127.0.0.1:${port}/site-monitor`;
});
afterAll(() => {
  child?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const body = (deliveryId: string) =>
  JSON.stringify({
    deliveryId,
    event: 'raised',
    step: 0,
    alarm: {
      SiteAlarmLogID: '42',
      SiteID: 1,
      AlarmType: 'HighDischargePressure',
      Severity: 'critical',
    },
    site: { SiteID: 1, Name: 'Pecos SWD 1 – “north” pad' },
  });

it('accepts what the service signs, once per deliveryId, and refuses another secret', async () => {
  const id = '0f8b2c4e-0000-4000-8000-000000000001';
  expect(await postWebhook(url, SECRET, id, body(id), allowed)).toEqual({ result: 'delivered' });
  // The same delivery again (a retry after a lost answer): answered 2xx, handled once.
  expect(await postWebhook(url, SECRET, id, body(id), allowed)).toEqual({ result: 'delivered' });
  await until(
    () => out.includes('raised critical HighDischargePressure'),
    'the receiver to log it',
  );
  expect(
    out.match(/raised critical HighDischargePressure at Pecos SWD 1 – “north” pad/g),
  ).toHaveLength(1);
  // Signed with another secret (or not at all): 401, which the service does not retry.
  const other = '0f8b2c4e-0000-4000-8000-000000000002';
  expect(await postWebhook(url, 'another-secret-16chars', other, body(other), allowed)).toEqual({
    result: 'failed',
    reason: 'HTTP 401',
  });
  expect(await postWebhook(url, null, other, body(other), allowed)).toEqual({
    result: 'failed',
    reason: 'HTTP 401',
  });
});
