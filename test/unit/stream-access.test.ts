import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/index.js';
import { checkSubscriptions, type Subscription } from '../../src/stream/access.js';
import type { Subscriber } from '../../src/stream/subscriber.js';

// The heartbeat's access check reads the clients of every stream, then judges each stream. A stream
// that begins while those reads are under way was checked when it began: it must not be judged
// against a lookup that never asked for its client (it would be ended as if its client were gone).

const scope = (clientId: string): Subscription => ({
  clientId,
  named: [1],
  sites: [1],
  reach: [1],
});
const sub = (name: string) => ({ name }) as unknown as Subscriber;

describe('stream access check', () => {
  it('leaves alone a stream that begins while the clients are read', async () => {
    const subs = new Map<Subscriber, Subscription>([[sub('old'), scope('a')]]);
    const late = sub('late');
    const db: Queryable = {
      query: async <T>(_sql: string, params?: unknown[]) => {
        subs.set(late, scope('b')); // a new stream registers meanwhile
        return [{ clientId: params?.[0], siteIds: [1], role: 'full', disabled: false }] as T[];
      },
    };
    expect(await checkSubscriptions(db, subs)).toEqual([]);
    expect(subs.has(late)).toBe(true);
  });

  it('ends the streams of a client that is gone, disabled, lost a named site or the role to read', async () => {
    const gone = sub('gone');
    const disabled = sub('disabled');
    const moved = sub('moved');
    const kept = sub('kept');
    const demoted = sub('demoted');
    const operator = sub('operator');
    const subs = new Map<Subscriber, Subscription>([
      [gone, scope('gone')],
      [disabled, scope('disabled')],
      [moved, scope('moved')],
      [kept, scope('kept')],
      [demoted, scope('demoted')],
      [operator, scope('operator')],
    ]);
    const clients: Record<string, object> = {
      disabled: { clientId: 'disabled', siteIds: [1], role: 'full', disabled: true },
      moved: { clientId: 'moved', siteIds: [2], role: 'full', disabled: false },
      kept: { clientId: 'kept', siteIds: [1, 2], role: 'full', disabled: false },
      demoted: { clientId: 'demoted', siteIds: [1], role: 'edge', disabled: false },
      operator: { clientId: 'operator', siteIds: [1], role: 'operator', disabled: false },
    };
    const db: Queryable = {
      query: async <T>(_sql: string, params?: unknown[]) =>
        (clients[String(params?.[0])] ? [clients[String(params?.[0])]] : []) as T[],
    };
    expect(new Set(await checkSubscriptions(db, subs))).toEqual(
      new Set([gone, disabled, moved, demoted]),
    );
  });

  it('ends a stream whose token a secret rotation retired, and keeps one whose token came after', async () => {
    const token = (rotation: number) => ({ clientId: 'c', issuedAt: 1, expiresAt: 9e15, rotation });
    const before = sub('before');
    const after = sub('after');
    const subs = new Map<Subscriber, Subscription>([
      [before, { ...scope('c'), token: token(100) }],
      [after, { ...scope('c'), token: token(200) }],
    ]);
    const db: Queryable = {
      query: async <T>() =>
        [
          { clientId: 'c', siteIds: [1], role: 'full', disabled: false, tokensNotBefore: 200 },
        ] as T[],
    };
    expect(await checkSubscriptions(db, subs)).toEqual([before]);
  });
});
