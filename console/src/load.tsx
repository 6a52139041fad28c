import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// Loading and error states, the same on every page.

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Runs `fn` whenever `deps` change; an older answer arriving late is dropped. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({
    loading: true,
  });
  const [n, setN] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    fn(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (err: Error) => !ctl.signal.aborted && setState({ error: err.message, loading: false }),
    );
    return () => ctl.abort();
  }, [...deps, n]);
  return { ...state, reload: () => setN((x) => x + 1) };
}

/** The page's content once loaded; a spinner line before, the error with a retry after a failure. */
export function Status<T>({
  load,
  what,
  children,
}: {
  load: Loaded<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (load.error)
    return (
      <div class="error" role="alert">
        <p>
          Could not load {what}: {load.error}
        </p>
        <button type="button" onClick={load.reload}>
          Try again
        </button>
      </div>
    );
  if (load.data === undefined)
    return (
      <p class="loading" role="status">
        Loading {what}…
      </p>
    );
  return <>{children(load.data)}</>;
}
