import { requireEquipment, type Access } from '../auth/access.js';
import type { Database } from '../db/index.js';
import type { TelemetryKind } from '../equipment.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { parseTime } from '../time.js';
import { bodyEncoding } from './encoding.js';
import type { BodyEncoding } from './cache.js';
import { ConfigReader, type SiteView } from './reader.js';

// The configuration paths' rules around the reads: the updates cut-off, who may read what (404
// before 403 for ids, the same 403 for an unknown site as for one out of reach) and the encoding
// of a whole-site body. Errors carry their status; the routes only reply.

export interface ReadOptions {
  light: boolean;
  /** The /updates paths' startDate; undefined on the others (everything is returned). */
  startDate?: string;
}

export interface SiteViewOptions extends ReadOptions {
  /** The route's serializer: whole views are cached serialized. */
  serialize: (value: unknown) => string;
  /** The request's Accept-Encoding header. */
  acceptEncoding?: string;
}

/** A value for the route to serialize (an /updates view), or a body serialized already, in its encoding. */
export type SiteViewAnswer = { value: unknown } | { body: Buffer; encoding: BodyEncoding };

/** The updates cut-off in ms (null without startDate); 400 when it is not an ISO 8601 date-time. */
function cutOff(startDate: string | undefined): number | null {
  if (startDate === undefined) return null;
  const t = parseTime(startDate);
  if (t === undefined)
    throw badRequest('startDate is not an ISO 8601 date-time', [
      { path: '/startDate', message: 'must be an ISO 8601 date-time' },
    ]);
  return t;
}

export class ConfigService {
  // One per app: its cache serves every request.
  private readonly reader = new ConfigReader();

  /** A sensor's registers, or an equipment's role and sensor registers: 404 unknown, 403 out of reach. */
  async registersById(
    db: Database,
    access: Access,
    kind: TelemetryKind,
    id: number,
    options: ReadOptions,
  ): Promise<unknown> {
    const since = cutOff(options.startDate);
    const siteId = (await requireEquipment(db, access, kind, [id])).get(id)!;
    if (kind === 'sensor') return this.reader.sensorRegisters(db, id, siteId, since, options.light);
    const body = await this.reader.equipmentRegisters(db, kind, id, siteId, since, options.light);
    // Deleted between the access check and the read.
    if (!body) throw notFound(`${kind} ${id} does not exist`);
    return body;
  }

  /** A whole-site view; 403 for a site out of reach or unknown. */
  async siteView(
    db: Database,
    access: Access,
    siteId: number,
    view: SiteView,
    options: SiteViewOptions,
  ): Promise<SiteViewAnswer> {
    const since = cutOff(options.startDate);
    access.assertSites([siteId]);
    const read = await this.reader.siteView(db, siteId, view, {
      light: options.light,
      since,
      serialize: options.serialize,
    });
    // A site that does not exist answers like one out of reach: the same 403 for every client.
    if (!read) throw forbidden('no access to one or more of the requested sites');
    if ('value' in read) return read;
    const encoding = bodyEncoding(options.acceptEncoding);
    return { body: await read.body.encoded(encoding), encoding };
  }
}
