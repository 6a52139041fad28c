import { describe, expect, it } from 'vitest';
import { allowList, mayCall } from '../../src/alarms/notify/address.js';
import { backoffMs } from '../../src/alarms/notify/deliver.js';
import { decide } from '../../src/alarms/notify/schedule.js';
import { signature } from '../../src/alarms/notify/webhook.js';

// The rules of notifications that need no database (contract 16): which addresses a webhook may
// call, the backoff, the signature, and what a due step becomes.

describe('webhook addresses', () => {
  const none = allowList(undefined);
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is refused', (a) => expect(mayCall(a, none)).toBe(false));
  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])('%s is allowed', (a) =>
    expect(mayCall(a, none)).toBe(true),
  );
  it('NOTIFY_ALLOW_PRIVATE lets its ranges through, and only them', () => {
    const allowed = allowList('10.20.0.0/16, ::1/128');
    expect(mayCall('10.20.3.4', allowed)).toBe(true);
    expect(mayCall('::1', allowed)).toBe(true);
    expect(mayCall('10.21.0.1', allowed)).toBe(false);
    expect(mayCall('127.0.0.1', allowed)).toBe(false);
  });
});

describe('backoff', () => {
  it('starts at 1 s, doubles, stays within 10 min, jittered between half and all of it', () => {
    expect(backoffMs(1, () => 1)).toBe(1000);
    expect(backoffMs(2, () => 1)).toBe(2000);
    expect(backoffMs(4, () => 1)).toBe(8000);
    expect(backoffMs(30, () => 1)).toBe(600_000);
    expect(backoffMs(3, () => 0)).toBe(2000);
  });
});

describe('signature', () => {
  it('is the HMAC-SHA256 of "<timestamp>.<body>" in hex', () => {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac k
    expect(signature('k', 1_700_000_000, '{"a":1}')).toBe(
      'sha256=1b6ad1bc9bf48c52ce01939866d5877c6cc4e87ddad27e16673cb8c4964394a3',
    );
    expect(signature('k', 1, 'x')).not.toBe(signature('k', 2, 'x'));
  });
});

describe('steps', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  const min = (m: number) => new Date(now.getTime() - m * 60_000);
  const row = (over: object) => ({
    alarm_id: '1',
    policy_id: 'p',
    next_step: 0,
    site_id: 1,
    severity: 'major',
    raised_at: now,
    resolved: false,
    acknowledged: false,
    shelved_until: null,
    steps: [
      { after: 0, channels: ['a'] },
      { after: 10, channels: ['b'] },
      { after: 30, channels: ['c'] },
    ],
    repeat_minutes: 60,
    min_severity: 'major',
    now,
    ...over,
  });
  it('sends step 0 as raised and schedules step 1', () => {
    expect(decide(row({}))).toEqual({
      send: { step: 0, event: 'raised', channels: ['a'] },
      next: { step: 1, due: new Date(now.getTime() + 10 * 60_000) },
    });
  });
  it('after a while away (a shelf, the service down), only the latest step due is sent', () => {
    expect(decide(row({ next_step: 1, raised_at: min(45) }))).toEqual({
      send: { step: 2, event: 'escalated', channels: ['c'] },
      next: { step: 3, due: new Date(now.getTime() + 60 * 60_000) },
    });
  });
  it('repeats the last step every RepeatMinutes; without repeats the schedule ends', () => {
    expect(decide(row({ next_step: 3, raised_at: min(90) })).send).toEqual({
      step: 2,
      event: 'repeated',
      channels: ['c'],
    });
    expect(decide(row({ next_step: 2, raised_at: min(30), repeat_minutes: 0 })).next).toBeNull();
  });
  it('acknowledged or resolved: nothing more; shelved: waits', () => {
    expect(decide(row({ acknowledged: true }))).toEqual({ next: null });
    expect(decide(row({ resolved: true }))).toEqual({ next: null });
    const shelved = decide(row({ shelved_until: new Date(now.getTime() + 3_600_000) }));
    expect(shelved.send).toBeUndefined();
    expect(shelved.next?.step).toBe(0);
  });
  it('compares the severity at each step: below MinSeverity the step passes unsent', () => {
    const d = decide(row({ severity: 'minor' }));
    expect(d.send).toBeUndefined();
    expect(d.next?.step).toBe(1);
    expect(decide(row({ severity: 'critical' })).send?.step).toBe(0);
  });
});
