import type {
  ErrorBody,
  GetAnswer,
  GetPath,
  GetQuery,
  PostAnswer,
  PostBody,
  PostPath,
} from './api-schema.js';
import { withQuery } from './router.js';
import { session, signOut, type Session } from './session.js';

// Every call of the public API goes through here: the bearer token, the error body's message, and
// a 401 (token expired, client disabled) that returns the user to the sign-in page. get, send and
// post take the paths, queries and bodies the OpenAPI document defines and give its answers' types.

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
    const body = (await res.json()) as Partial<ErrorBody>;
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

/** GET of a JSON answer, with the query the document defines for the path. */
export async function get<P extends GetPath>(
  path: P,
  query: GetQuery<P>,
  signal?: AbortSignal,
): Promise<GetAnswer<P>> {
  const url = query ? withQuery(path, query) : path;
  return (await call(url, { signal })).json();
}

/** POST of the JSON body the document defines for the path; the raw answer (JSON, CSV, zip: as `accept` asks). */
export const send = <P extends PostPath>(
  path: P,
  body: PostBody<P>,
  opts: { accept?: string; signal?: AbortSignal } = {},
): Promise<Response> => call(path, { ...opts, body });

/** POST of the JSON body the document defines for the path; its JSON answer. */
export async function post<P extends PostPath>(
  path: P,
  body: PostBody<P>,
  signal?: AbortSignal,
): Promise<PostAnswer<P>> {
  return (await send(path, body, { signal })).json();
}

/** POST /token; the session it starts. */
export async function requestToken(clientId: string, clientSecret: string): Promise<Session> {
  const request: PostBody<'/token'> = { clientId, clientSecret };
  const res = await fetch('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  }).catch(() => {
    throw new ApiError(0, 'The service cannot be reached.');
  });
  if (res.status === 400 || res.status === 401)
    throw new ApiError(res.status, 'Unknown client ID or wrong secret.');
  if (!res.ok) throw await failure(res);
  const body = (await res.json()) as PostAnswer<'/token'>;
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
