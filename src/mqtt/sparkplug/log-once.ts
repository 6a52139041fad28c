// Logging once per key: a gateway that repeats the same fault (a payload, a metric, a write)
// leaves one line, not one per message.

/** Keys kept; past this the memory starts again (a node sending ever new names). */
const MAX_LOGGED = 10_000;

/** Calls `log` the first time `key` is seen. */
export type LogOnce = (key: string, log: () => void) => void;

export function createLogOnce(): LogOnce {
  const logged = new Set<string>();
  return (key, log) => {
    if (logged.has(key)) return;
    if (logged.size >= MAX_LOGGED) logged.clear();
    logged.add(key);
    log();
  };
}
