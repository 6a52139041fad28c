// Waiting for something to happen instead of sleeping for a while: a poll of the condition, with a
// deadline only to fail with a message before the test's own timeout. The deadline is generous
// (the suites share 2 cores); no assertion depends on how soon the condition holds.

/** Resolves with the first truthy value of `ok`, polled every `every` ms; throws after `ms`. */
export async function until<T>(
  ok: () => T | Promise<T>,
  what: string | (() => string) = 'the condition',
  { ms = 30_000, every = 20 }: { ms?: number; every?: number } = {},
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await ok();
    if (value) return value;
    if (Date.now() > end) {
      // After a stall of the whole process, timers run before the I/O that came meanwhile: let it
      // be handled, and look once more.
      await new Promise((r) => setImmediate(r));
      const last = await ok();
      if (last) return last;
      throw new Error(`waited ${ms} ms for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/** A promise with its resolve function, to wait for a step of a test to be reached. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
