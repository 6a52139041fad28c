// Text the database can hold as sent. PostgreSQL text cannot hold U+0000, and a string with a lone
// UTF-16 surrogate ("\ud800" without its pair) has no UTF-8 form: it would be stored as U+FFFD, or
// refused by the database. Inputs holding either are refused (HTTP bodies: plugins/validation.ts;
// provisioning files: the CLI), never stored altered.

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string (or key) cannot be stored as text. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'NUL is not allowed';
  if (LONE_SURROGATE.test(s))
    return 'a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) is not allowed';
  return undefined;
}

/**
 * JSON pointer of the first string (or key) that cannot be stored as text, and why; or undefined.
 * A loop, not recursion: a body may nest thousands of levels deep.
 */
export function badTextAt(
  root: unknown,
  rootPath = '',
): { path: string; message: string } | undefined {
  const stack: [unknown, string][] = [[root, rootPath]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      const message = textProblem(v);
      if (message) return { path: at, message };
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i];
        const here = `${at}/${k.slice(0, 100)}`;
        const message = textProblem(k);
        if (message) return { path: here, message };
        stack.push([x, here]);
      }
    }
  }
  return undefined;
}
