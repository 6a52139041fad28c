import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { ConfigIndex } from './assemble.js';
import type { ConfigData } from './data.js';

// Site configurations reused while the site's configuration rows are unchanged: the loaded and
// indexed rows (which every path of the site, /updates ones included, is built from) and the
// serialized bodies of the whole-site paths. Validity is decided by the database on every request
// (siteFingerprint), never by time, so nothing served is stale and instances need no coordination.
// Every entry is built from one snapshot of the database, so no answer mixes two imports.

const MAX_ROWS = 50_000;
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Least recently used entries go first once the total size passes the bound. */
class Lru<T> {
  private readonly entries = new Map<string, { fingerprint: string; value: T; size: number }>();
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly sizeOf: (v: T) => number,
  ) {}

  get(key: string, fingerprint: string): T | undefined {
    const e = this.entries.get(key);
    if (!e || e.fingerprint !== fingerprint) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, fingerprint: string, value: T): void {
    this.drop(key);
    const size = this.sizeOf(value);
    if (size > this.max / 4) return;
    this.entries.set(key, { fingerprint, value, size });
    this.total += size;
    for (const oldest of this.entries.keys()) {
      if (this.total <= this.max) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.total -= e.size;
    this.entries.delete(key);
  }
}

const gzipAsync = promisify(gzip);

/** How a cached body is sent: as serialized, or gzipped. The route chooses (from Accept-Encoding). */
export type BodyEncoding = 'identity' | 'gzip';

/** A serialized body, and its gzip form made (off the event loop) the first time a client asks for it. */
export class CachedBody {
  private gzipped?: Promise<Buffer>;
  constructor(readonly raw: Buffer) {}
  gzip(): Promise<Buffer> {
    return (this.gzipped ??= gzipAsync(this.raw, { level: 6 }));
  }
  /** The bytes to send in that encoding. */
  encoded(encoding: BodyEncoding): Promise<Buffer> {
    return encoding === 'gzip' ? this.gzip() : Promise.resolve(this.raw);
  }
}

/** An index and the fingerprint of the snapshot it was read in. */
export interface LoadedSite {
  fingerprint: string;
  index: ConfigIndex;
}

const rowsOf = (d: ConfigData) =>
  d.devices.length +
  d.registers.length +
  d.sensors.length +
  Object.values(d.equipment).reduce((n, list) => n + list.length, 0) +
  d.actuators.actuators.length +
  d.linkChanges.length;

export class ConfigCache {
  /** Per site, the fingerprint query under way, and the one that will follow it. */
  private readonly checking = new Map<number, Promise<string | undefined>>();
  private readonly queued = new Map<number, Promise<string | undefined>>();
  private readonly indexes = new Lru<ConfigIndex>(MAX_ROWS, (i) => rowsOf(i.data));
  // The gzip form, when made, is about a tenth of the raw one: counted in with the raw size.
  private readonly bodies = new Lru<CachedBody>(MAX_BODY_BYTES, (b) =>
    Math.ceil(b.raw.length * 1.1),
  );
  /** Loads under way, so that concurrent misses of one site share one load. */
  private readonly loading = new Map<string, Promise<LoadedSite | undefined>>();

  /**
   * The site's fingerprint, with at most one query per site under way: requests that arrive while
   * one runs share the next one, which starts after they all arrived, so none is answered from a
   * state older than at its arrival. Under load this saves the database most of the checks.
   */
  fingerprint(
    siteId: number,
    query: () => Promise<string | undefined>,
  ): Promise<string | undefined> {
    const running = this.checking.get(siteId);
    if (!running) {
      const started = query().finally(() => this.checking.delete(siteId));
      this.checking.set(siteId, started);
      return started;
    }
    let next = this.queued.get(siteId);
    if (!next) {
      next = running
        .catch(() => undefined)
        .then(() => {
          this.queued.delete(siteId);
          return this.fingerprint(siteId, query);
        });
      this.queued.set(siteId, next);
    }
    return next;
  }

  body(key: string, fingerprint: string): CachedBody | undefined {
    return this.bodies.get(key, fingerprint);
  }

  setBody(key: string, fingerprint: string, body: CachedBody): void {
    this.bodies.set(key, fingerprint, body);
  }

  /**
   * The site's indexed configuration as of this fingerprint, loaded when not cached. A load reads
   * the fingerprint again with the rows, in one snapshot, and the index is kept under that one: it
   * may be newer than the one asked for (an import committed meanwhile), never a mix of two states.
   */
  index(
    siteId: number,
    fingerprint: string,
    load: () => Promise<LoadedSite | undefined>,
  ): Promise<LoadedSite | undefined> {
    const hit = this.indexes.get(String(siteId), fingerprint);
    if (hit) return Promise.resolve({ fingerprint, index: hit });
    const key = `${siteId} ${fingerprint}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load()
        .then((loaded) => {
          if (loaded) this.indexes.set(String(siteId), loaded.fingerprint, loaded.index);
          return loaded;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}
