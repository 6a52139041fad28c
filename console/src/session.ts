import { useEffect, useState } from 'preact/hooks';

// The signed-in client: its token lives in this tab's sessionStorage only (gone when the tab
// closes, never sent as a cookie). A 401 anywhere ends the session with a message for the sign-in page.

export interface Session {
  clientId: string;
  token: string;
  expiresAt: number;
}

const KEY = 'site-monitor.session';
let current: Session | null = load();
let notice = '';
const listeners = new Set<() => void>();

function load(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return s && s.expiresAt > Date.now() ? s : null;
  } catch {
    return null;
  }
}

function changed() {
  for (const l of listeners) l();
}

export const session = () => current;
/** Why the last session ended, shown once on the sign-in page. */
export const signOutNotice = () => notice;

export function signIn(s: Session) {
  current = s;
  notice = '';
  sessionStorage.setItem(KEY, JSON.stringify(s));
  changed();
}

export function signOut(message = '') {
  current = null;
  notice = message;
  sessionStorage.removeItem(KEY);
  changed();
}

/** Re-renders the caller when someone signs in or out. */
export function useSession(): Session | null {
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return current;
}
