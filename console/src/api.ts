import { session, signOut, type Session } from './session.js';

// Every call of the public API goes through here: the bearer token, the error body's message, and
// a 401 (token expired, client disabled) that returns the user to the sign-in page.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const EXPIRED =
  'Your session has ended (the token expired or was revoked). Please sign in again.';

async function failure(res: Response): Promise<ApiError> {
  if (res.status === 401 && session()) signOut(EXPIRED);
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { message?: string };
    if (body.message) message = body.message;
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, message);
}

export interface CallOptions {
  method?: 'GET' | 'POST';
  body?: unknown;
  accept?: string;
  signal?: AbortSignal;
}

/** The raw response of an authorized call (2xx only; otherwise an ApiError). */
export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const s = session();
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  if (s) headers.authorization = `Bearer ${s.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  if (!res.ok) throw await failure(res);
  return res;
}

export async function api<T>(path: string, opts: CallOptions = {}): Promise<T> {
  return (await call(path, opts)).json() as Promise<T>;
}

/** POST /token; the session it starts. */
export async function requestToken(clientId: string, clientSecret: string): Promise<Session> {
  const res = await fetch('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId, clientSecret }),
  }).catch(() => {
    throw new ApiError(0, 'The service cannot be reached.');
  });
  if (res.status === 400 || res.status === 401)
    throw new ApiError(res.status, 'Unknown client ID or wrong secret.');
  if (!res.ok) throw await failure(res);
  const body = (await res.json()) as { accessToken: string; expiresIn: number };
  return { clientId, token: body.accessToken, expiresAt: Date.now() + body.expiresIn * 1000 };
}

/** Saves a response body as a file the browser downloads. */
export async function saveAs(res: Response | Blob, name: string) {
  const blob = res instanceof Blob ? res : await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
