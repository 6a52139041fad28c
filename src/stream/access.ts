import { requireSites, type Access } from '../auth/access.js';
import { findClient } from '../auth/clients.js';
import { roleHas, type Right } from '../auth/roles.js';
import { issuedAfterRotation, type VerifiedToken } from '../auth/tokens.js';
import type { Queryable } from '../db/index.js';
import { badRequest } from '../errors.js';
import type { Subscriber } from './subscriber.js';

// Who may stream what: checked when a stream begins, as every route checks (403 as a whole for a
// site out of reach), and again every heartbeat, because a stream outlives its request: it ends
// when the client is disabled, loses a site it streams or the role to read, its secret is rotated
// after the stream's token was issued, or its token expires.

/** The right a stream needs (its route declares it): kept while it lasts. */
export const STREAM_RIGHT: Right = 'read';

export interface Subscription {
  clientId: string;
  /** The sites the request named; null: it named none (every site of the client). */
  named: number[] | null;
  /** The sites streamed; null: every site, also those added later. */
  sites: number[] | null;
  /** The client's sites when the stream began (null: every site). */
  reach: number[] | null;
  /** Epoch ms at which the token expires. */
  expiresAt?: number;
  /** The token the stream began with: it ends when a secret rotation or a disable retires it. */
  token?: VerifiedToken;
  stop?: () => void;
}

/** What a client streams: the sites it named (403 if any is out of reach), else all of its own. */
export async function resolveSubscription(
  db: Queryable,
  access: Access,
  named: number[] | null,
  maxSites: number,
): Promise<Subscription> {
  const reach = access.siteIds;
  let sites = reach;
  if (named) {
    await requireSites(db, access, named);
    sites = [...new Set(named)].sort((a, b) => a - b);
  } else {
    const n = reach
      ? reach.length
      : (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM sites'))[0].n;
    if (n > maxSites)
      throw badRequest(`this client reaches ${n} sites; name at most ${maxSites} with siteIds`, [
        { path: '/siteIds', message: 'required for a client of this many sites' },
      ]);
  }
  return {
    clientId: access.client.clientId,
    named,
    sites,
    reach,
    expiresAt: access.expiresAt,
    token: access.token,
  };
}

const sitesKey = (sites: number[] | null) =>
  sites ? [...sites].sort((x, y) => x - y).join(',') : '*';

/** The streams whose client is now disabled or gone, or no longer reaches what it streams or may read. */
export async function checkSubscriptions(
  db: Queryable,
  subs: Map<Subscriber, Subscription>,
): Promise<Subscriber[]> {
  // The streams as they are now: one that begins while the clients are read is checked next time
  // (it was checked when it began), never judged against a lookup that left its client out.
  const entries = [...subs];
  const ids = [...new Set(entries.map(([, s]) => s.clientId))];
  const clients = new Map(
    await Promise.all(ids.map(async (id) => [id, await findClient(db, id)] as const)),
  );
  const ended: Subscriber[] = [];
  for (const [sub, s] of entries) {
    const client = clients.get(s.clientId);
    const reach = client?.siteIds ?? null;
    const lost = s.named
      ? reach !== null && s.named.some((site) => !reach.includes(site))
      : sitesKey(reach) !== sitesKey(s.reach);
    const retired = s.token !== undefined && client && !issuedAfterRotation(s.token, client);
    const demoted = client && !roleHas(client.role, STREAM_RIGHT);
    if (!client || client.disabled || lost || retired || demoted) ended.push(sub);
  }
  return ended;
}
