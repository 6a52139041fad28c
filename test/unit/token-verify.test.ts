import { createSigner } from 'fast-jwt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenService } from '../../src/auth/tokens.js';

// The token service remembers the tokens that verified (tokens.ts): a remembered token must still
// be refused the moment it expires, and remembering must never accept anything the verification
// would refuse.

const SECRET = 'a-secret-of-the-tests-0123456789';

describe('token verification, remembered', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts a token again and again, and refuses it once it has expired', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T12:00:00Z') });
    const tokens = createTokenService(SECRET, 60);
    const { accessToken } = tokens.issue('alpha', 0);
    const first = tokens.verify(accessToken);
    expect(first).toMatchObject({ clientId: 'alpha', rotation: 0 });
    expect(tokens.verify(accessToken)).toBe(first);
    // The same object goes to every request: nobody may change it.
    expect(Object.isFrozen(first)).toBe(true);
    vi.setSystemTime(Date.parse('2026-11-26T12:01:00Z')); // exp itself: still valid
    expect(tokens.verify(accessToken)).toBe(first);
    vi.setSystemTime(Date.parse('2026-11-26T12:01:00.001Z'));
    expect(tokens.verify(accessToken)).toBeUndefined();
    expect(tokens.verify(accessToken)).toBeUndefined();
  });

  it('refuses a token before its nbf, and accepts it from then on', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T12:00:00Z') });
    const tokens = createTokenService(SECRET, 60);
    const sign = createSigner({ key: SECRET, algorithm: 'HS256' });
    const now = Math.floor(Date.now() / 1000);
    const later = sign({ sub: 'alpha', jti: 'x', iat: now, nbf: now + 10, exp: now + 60 });
    expect(tokens.verify(later)).toBeUndefined();
    vi.setSystemTime(Date.parse('2026-11-26T12:00:10Z'));
    expect(tokens.verify(later)).toMatchObject({ clientId: 'alpha' });
    expect(tokens.verify(later)).toMatchObject({ clientId: 'alpha' });
  });

  it('a remembered token does not make a changed one valid', () => {
    const tokens = createTokenService(SECRET, 60);
    const { accessToken } = tokens.issue('alpha', 0);
    expect(tokens.verify(accessToken)).toBeDefined();
    const [h, p, s] = accessToken.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'beta' })).toString('base64url')}.${s}`;
    expect(tokens.verify(forged)).toBeUndefined();
    expect(tokens.verify(`${accessToken}x`)).toBeUndefined();
    expect(tokens.verify(accessToken.slice(0, -1))).toBeUndefined();
    // Another service's secret: its tokens are not ours.
    const other = createTokenService(`${SECRET}-other`, 60).issue('alpha', 0).accessToken;
    expect(tokens.verify(other)).toBeUndefined();
  });

  it('keeps verifying correctly beyond the number of tokens it remembers', () => {
    const tokens = createTokenService(SECRET, 60);
    const issued = Array.from({ length: 10_050 }, (_, i) => tokens.issue(`c${i}`, 0).accessToken);
    for (const [i, t] of issued.entries()) expect(tokens.verify(t)?.clientId).toBe(`c${i}`);
    // The first ones were forgotten and are verified again; the last ones are remembered.
    expect(tokens.verify(issued[0])?.clientId).toBe('c0');
    expect(tokens.verify(issued[10_049])?.clientId).toBe('c10049');
  });
});
