// Serialized site configurations (as bytes, ready to send), reused while the site's configuration rows are unchanged.
// Validity is decided by the database on every request (siteFingerprint), never by time, so a
// cached body is never stale and several instances need no coordination.

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export class ResponseCache {
  private readonly entries = new Map<string, { fingerprint: string; body: Buffer }>();
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_MAX_BYTES) {}

  /** The body cached under key for exactly this fingerprint. */
  get(key: string, fingerprint: string): Buffer | undefined {
    const e = this.entries.get(key);
    if (!e || e.fingerprint !== fingerprint) return undefined;
    // Most recently used last: eviction takes from the front.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.body;
  }

  set(key: string, fingerprint: string, body: Buffer): void {
    this.drop(key);
    if (body.length > this.maxBytes / 4) return;
    this.entries.set(key, { fingerprint, body });
    this.bytes += body.length;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.bytes -= e.body.length;
    this.entries.delete(key);
  }
}
