import type { Database, Row } from '../db/index.js';
import { ATTACH_KINDS, type AttachKind, type TelemetryKind } from '../equipment.js';
import { ConfigIndex, type Since } from './assemble.js';
import { CachedBody, ConfigCache, type LoadedSite } from './cache.js';
import { loadEquipment, loadSensor } from './load-by-id.js';
import { loadSite, siteFingerprint } from './load-site.js';
import {
  actuatorEntries,
  compactConfig,
  equipmentConfig,
  equipmentRegisters,
  Shaper,
  sensorConfig,
  siteConfig,
} from './shape.js';

// What the configuration routes answer, without HTTP: the by-id reads and the whole-site views,
// the latter through the cache (see cache.ts).

/** The whole-site views of interface §4.3: the list of one kind, the actuators, the whole site. */
export type SiteView = TelemetryKind | 'actuators' | 'site' | 'compact';

type View = (index: ConfigIndex, s: Shaper, since: Since) => unknown;

const equipmentView =
  (kind: AttachKind): View =>
  (index, s, since) =>
    index.equipmentEntries(kind, since).map((e) => equipmentConfig(e, s));

const VIEWS: Record<SiteView, View> = {
  sensor: (index, s, since) => index.sensorEntries(since).map((e) => sensorConfig(e, s)),
  ...(Object.fromEntries(ATTACH_KINDS.map((k) => [k, equipmentView(k)])) as Record<
    AttachKind,
    View
  >),
  actuators: (index, s) => actuatorEntries(index.data.actuators, s),
  site: siteConfig,
  compact: (index, _s, since) => compactConfig(index, since),
};

export interface SiteRead {
  light: boolean;
  /** The /updates cut-off, or null for the whole view. */
  since: Since;
  /** The route's serializer: whole views are cached serialized. */
  serialize: (value: unknown) => string;
}

export class ConfigReader {
  // Each read takes the database of the request it answers (its calls end by that request's deadline).
  private readonly cache = new ConfigCache();

  /** The registers a sensor reads; with a cut-off, what changed (see ConfigIndex.sensorUpdates). */
  async sensorRegisters(
    db: Database,
    sensorId: number,
    siteId: number,
    since: Since,
    light: boolean,
  ): Promise<Row[]> {
    const index = new ConfigIndex(await db.snapshot((tx) => loadSensor(tx, sensorId, siteId)));
    const registers =
      since === null ? index.registersOfSensor(sensorId) : index.sensorUpdates(sensorId, since);
    return registers.map(new Shaper(light).register);
  }

  /** MeterRegistersDto, PumpRegistersDto or TankRegistersDto; undefined when the equipment is gone. */
  async equipmentRegisters(
    db: Database,
    kind: AttachKind,
    id: number,
    siteId: number,
    since: Since,
    light: boolean,
  ): Promise<Row | undefined> {
    const index = new ConfigIndex(await db.snapshot((tx) => loadEquipment(tx, kind, id, siteId)));
    const entry = index.onlyEquipment(kind);
    if (!entry) return undefined;
    return equipmentRegisters(
      since === null ? entry : index.equipmentUpdates(entry, since),
      new Shaper(light),
    );
  }

  /**
   * A whole-site view: the serialized body (cached while the site is unchanged) without a cut-off,
   * the value itself with one (built from the cached rows every time). Undefined: no such site.
   */
  async siteView(
    db: Database,
    siteId: number,
    view: SiteView,
    read: SiteRead,
  ): Promise<{ body: CachedBody } | { value: unknown } | undefined> {
    const fingerprint = await this.cache.fingerprint(siteId, () => siteFingerprint(db, siteId));
    if (fingerprint === undefined) return undefined;
    const key = `${view}${read.light ? ' light' : ''} ${siteId}`;
    let body = read.since === null ? this.cache.body(key, fingerprint) : undefined;
    if (body === undefined) {
      const loaded = await this.cache.index(siteId, fingerprint, () => this.loadSite(db, siteId));
      if (!loaded?.index.data.site) return undefined;
      const value = VIEWS[view](loaded.index, new Shaper(read.light), read.since);
      if (read.since !== null) return { value };
      body = new CachedBody(Buffer.from(read.serialize(value)));
      this.cache.setBody(key, loaded.fingerprint, body);
    }
    return { body };
  }

  /** The rows and their fingerprint from one snapshot, so a cache entry never pairs one state's key with another's rows. */
  private loadSite(db: Database, siteId: number): Promise<LoadedSite | undefined> {
    return db.snapshot(async (tx) => {
      const fingerprint = await siteFingerprint(tx, siteId);
      return fingerprint === undefined
        ? undefined
        : { fingerprint, index: new ConfigIndex(await loadSite(tx, siteId)) };
    });
  }
}
