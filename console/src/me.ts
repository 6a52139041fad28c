import { useEffect, useState } from 'preact/hooks';
import { get } from './api.js';
import type { GetAnswer } from './api-schema.js';
import { session, useSession } from './session.js';

// Who the signed-in client is (GET /v1/me), asked once per session, so that pages offer only what
// its role allows. The service checks every call anyway: this only spares a person buttons that
// would answer 403.

export type Me = GetAnswer<'/v1/me'>;
export type Role = Me['role'];

/** What the console offers, and the roles that may do it (the service's table of rights). */
const ALLOWED = {
  /** Acknowledge, shelve and unshelve alarms. */
  operate: ['full', 'operator'],
  /** Resolve alarms. */
  resolve: ['full', 'operator', 'edge'],
  /** Alarm lists, journal, KPIs, sites, downloads. */
  read: ['full', 'viewer', 'operator'],
} as const satisfies Record<string, readonly Role[]>;
export type Action = keyof typeof ALLOWED;

export const can = (me: Me | undefined, action: Action): boolean =>
  !!me && (ALLOWED[action] as readonly Role[]).includes(me.role);

let loaded: { token: string; me: Promise<Me>; known?: Me } | undefined;

function load(): Promise<Me> | undefined {
  const s = session();
  if (!s) return undefined;
  if (loaded?.token !== s.token) {
    const me = get('/v1/me', undefined);
    const entry: NonNullable<typeof loaded> = { token: s.token, me };
    loaded = entry;
    me.then(
      (m) => (entry.known = m),
      () => {
        if (loaded === entry) loaded = undefined;
      },
    );
  }
  return loaded.me;
}

/** The signed-in client, undefined until known (or after a failure: nothing is offered then). */
export function useMe(): Me | undefined {
  const s = useSession();
  const known = () => (loaded && loaded.token === s?.token ? loaded.known : undefined);
  const [me, setMe] = useState<Me | undefined>(known);
  useEffect(() => {
    let on = true;
    setMe(known());
    load()?.then(
      (m) => on && setMe(m),
      () => undefined,
    );
    return () => {
      on = false;
    };
  }, [s?.token]);
  return me;
}
