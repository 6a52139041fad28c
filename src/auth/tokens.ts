import { randomBytes, randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Database } from '../db/index.js';
import type { Client } from './clients.js';

export interface TokenService {
  /**
   * A token of the client; `tokensNotBefore` is the client's, read with the secret just checked (claim
   * `rot`; absent: none, so the token is refused once the client has been rotated or disabled).
   */
  issue(
    clientId: string,
    tokensNotBefore?: number | null,
  ): { accessToken: string; tokenType: 'Bearer'; expiresIn: number };
  /**
   * The client id, issue time (epoch seconds), expiry (epoch ms) and rotation claim of a valid token;
   * undefined for anything else (bad signature, alg, expiry, shape).
   */
  verify(token: string): VerifiedToken | undefined;
}

export interface VerifiedToken {
  clientId: string;
  issuedAt: number;
  expiresAt: number;
  /** The client's `tokensNotBefore` when the token was issued (0: none); absent in tokens of older releases. */
  rotation?: number;
}

/**
 * Whether a token was issued after its client's last secret rotation or disable. A token carries the
 * rotation it was issued under, read with the secret it was issued for, so the comparison is exact: one
 * got with the old secret, even within the same second or a moment before the rotation committed, is
 * refused; one got right after is accepted (also by an instance whose cached record is older). Tokens
 * without the claim (issued before it existed) have only `iat`, in whole seconds: one of the
 * rotation's own second may be from before it, so it is refused.
 */
export function issuedAfterRotation(token: VerifiedToken, client: Client): boolean {
  const retired = client.tokensNotBefore;
  if (retired == null) return true;
  if (token.rotation !== undefined) return token.rotation >= retired;
  return token.issuedAt > Math.floor(retired / 1_000_000);
}

/** JWT_SECRET when set; else one random secret kept in the database, so restarts and instances agree. */
export async function loadJwtSecret(db: Database, configured?: string): Promise<string> {
  if (configured) return configured;
  await db.query(
    `INSERT INTO service_settings (key, value) VALUES ('jwt_secret', $1) ON CONFLICT (key) DO NOTHING`,
    [randomBytes(48).toString('base64url')],
  );
  const [row] = await db.query<{ value: string }>(
    `SELECT value FROM service_settings WHERE key = 'jwt_secret'`,
  );
  return row.value;
}

/** Tokens whose verification is remembered (see createTokenService). */
const MAX_VERIFIED = 10_000;

export function createTokenService(secret: string, ttlSeconds: number): TokenService {
  const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: ttlSeconds * 1000 });
  // Only HS256 is accepted: `alg: none` and any other algorithm fail verification.
  const verifier = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'iat', 'exp', 'jti'],
  });
  // Tokens that verified, by their text, with the time they hold for ([nbf, exp], as the verifier
  // checks them): a client sends the same token with every request, and checking its signature
  // again each time (or looking it up by its SHA-256, as the verifier's own cache does: 5 % of the
  // service's time under single readings) is work done once per token here. Only a token whose
  // signature verified is kept, so nothing but the service's own tokens is remembered; failures are
  // not. The oldest go first beyond MAX_VERIFIED.
  const verified = new Map<string, { token: VerifiedToken; from: number; until: number }>();
  const check = (token: string): VerifiedToken | undefined => {
    try {
      const payload = verifier(token) as {
        sub?: unknown;
        iat?: unknown;
        exp?: unknown;
        nbf?: unknown;
        rot?: unknown;
      };
      if (
        typeof payload.sub !== 'string' ||
        typeof payload.iat !== 'number' ||
        typeof payload.exp !== 'number' ||
        (payload.rot !== undefined && typeof payload.rot !== 'number')
      )
        return undefined;
      // Shared by every request that sends the token: never changed.
      const result: VerifiedToken = Object.freeze({
        clientId: payload.sub,
        issuedAt: payload.iat,
        expiresAt: payload.exp * 1000,
        rotation: payload.rot as number | undefined,
      });
      if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
      verified.set(token, {
        token: result,
        from: typeof payload.nbf === 'number' ? payload.nbf * 1000 : -Infinity,
        until: result.expiresAt,
      });
      return result;
    } catch {
      return undefined;
    }
  };
  return {
    issue(clientId, tokensNotBefore) {
      return {
        accessToken: sign({ sub: clientId, jti: randomUUID(), rot: tokensNotBefore ?? 0 }),
        tokenType: 'Bearer',
        expiresIn: ttlSeconds,
      };
    },
    verify(token) {
      const hit = verified.get(token);
      if (hit) {
        const now = Date.now();
        if (now >= hit.from && now <= hit.until) return hit.token;
        verified.delete(token);
      }
      return check(token);
    },
  };
}
