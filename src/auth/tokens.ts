import { randomBytes, randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Database } from '../db/index.js';

export interface TokenService {
  issue(clientId: string): { accessToken: string; tokenType: 'Bearer'; expiresIn: number };
  /**
   * The client id, issue time (epoch seconds) and expiry (epoch ms) of a valid token; undefined for
   * anything else (bad signature, alg, expiry, shape).
   */
  verify(token: string): VerifiedToken | undefined;
}

export interface VerifiedToken {
  clientId: string;
  issuedAt: number;
  expiresAt: number;
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

export function createTokenService(secret: string, ttlSeconds: number): TokenService {
  const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: ttlSeconds * 1000 });
  // Only HS256 is accepted: `alg: none` and any other algorithm fail verification.
  const verifier = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    cache: 10_000,
    requiredClaims: ['sub', 'iat', 'exp', 'jti'],
  });
  return {
    issue(clientId) {
      return {
        accessToken: sign({ sub: clientId, jti: randomUUID() }),
        tokenType: 'Bearer',
        expiresIn: ttlSeconds,
      };
    },
    verify(token) {
      try {
        const payload = verifier(token) as { sub?: unknown; iat?: unknown; exp?: unknown };
        return typeof payload.sub === 'string' &&
          typeof payload.iat === 'number' &&
          typeof payload.exp === 'number'
          ? { clientId: payload.sub, issuedAt: payload.iat, expiresAt: payload.exp * 1000 }
          : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
