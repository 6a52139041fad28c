import { isUtf8 } from 'node:buffer';
import type { ValidateFunction } from 'ajv';
import { Access } from '../auth/access.js';
import type { Settings } from '../settings.js';
import { isDatabaseUnavailable } from '../db/deadline.js';
import { badRequest, errorBody, HttpError } from '../errors.js';
import { bodyValidator, checkBody } from '../schemas/validator.js';
import { badTextAt } from '../text.js';
import { TELEMETRY_KINDS, type TelemetryKind } from '../equipment.js';
import { idPath } from '../telemetry/equipment.js';
import type { Counts, Role } from '../telemetry/jobs.js';
import { logBatch, readingBatch } from '../telemetry/records.js';
import type { TelemetryService } from '../telemetry/service.js';
import { parseEntries } from '../telemetry/upload.js';

// The JSON topics (contract 14): `site-monitor/v1/sites/<siteId>/logs/<kind>` carries a JSON array
// of upload records as the batch log routes take it, `…/readings/<kind>` a `{ "readings": [ … ] }`.
// Each message is one upload, checked and stored as an HTTP batch is, on behalf of the topic's
// site: equipment of another site is a 403, unknown equipment a 404, a bad record a 400, and then
// nothing of it is stored. The topic's site is the authority; who may publish there is the broker's ACL.

export const JSON_TOPIC_ROOT = 'site-monitor/v1/sites';
/** The JSON topics, as a shared subscription of the instances of one host id. */
export const jsonSubscriptions = (hostId: string, prefix: string) => [
  `$share/${hostId}/${prefix}${JSON_TOPIC_ROOT}/+/logs/+`,
  `$share/${hostId}/${prefix}${JSON_TOPIC_ROOT}/+/readings/+`,
];

const TOPIC = /^site-monitor\/v1\/sites\/([1-9][0-9]{0,9})\/(logs|readings)\/([a-z]+)$/;

const POISON = /__proto__|constructor/;

export type JsonResult = 'stored' | 'malformed' | 'rejected' | 'ignored';

export interface JsonAnswer {
  result: JsonResult;
  /** 201 with the counts, or the error status with its body. */
  statusCode: number;
  body: Counts | ReturnType<typeof errorBody>;
}

/** A message the service could not store now (the database): not acknowledged, tried again. */
export class NotStored extends Error {}

export class JsonTopics {
  private readonly validators: Record<Role, Record<TelemetryKind, ValidateFunction>>;

  constructor(
    private readonly telemetry: TelemetryService,
    private readonly settings: Settings,
  ) {
    const compile = (make: (k: TelemetryKind) => object) =>
      Object.fromEntries(TELEMETRY_KINDS.map((k) => [k, bodyValidator.compile(make(k))])) as Record<
        TelemetryKind,
        ValidateFunction
      >;
    this.validators = {
      log: compile((k) => logBatch(k, settings.MAX_BATCH)),
      reading: compile((k) => readingBatch(k, settings.MAX_BATCH)),
    };
  }

  /**
   * Stores one message's records and says what to answer. Throws NotStored when the database could
   * not store it (the message is then not acknowledged).
   */
  async handle(topic: string, payload: Buffer): Promise<JsonAnswer> {
    const prefix = this.settings.MQTT_TOPIC_PREFIX;
    const m = topic.startsWith(prefix) ? TOPIC.exec(topic.slice(prefix.length)) : null;
    const kind = m?.[3] as TelemetryKind | undefined;
    if (!m || !TELEMETRY_KINDS.includes(kind!) || Number(m[1]) > 2_147_483_647)
      return answer('ignored', new HttpError(404, `not a topic of site-monitor: ${topic}`));
    const site = Number(m[1]);
    const role: Role = m[2] === 'logs' ? 'log' : 'reading';
    let body: unknown;
    try {
      body = this.parse(payload);
    } catch (err) {
      return answer('malformed', err as HttpError);
    }
    try {
      checkBody(this.validators[role][kind!], body, '');
      const records =
        role === 'log' ? (body as object[]) : (body as { readings: object[] }).readings;
      const prefix = role === 'log' ? '' : '/readings';
      const entries = parseEntries(kind!, role, records as Record<string, unknown>[], prefix);
      const access = new Access({
        clientId: `mqtt:site-${site}`,
        siteIds: [site],
        cameraIds: [],
        admin: false,
        role: 'edge',
        disabled: false,
      });
      const counts = await this.telemetry.store(
        access,
        role,
        entries,
        idPath(prefix, false),
        Date.now() + this.settings.WRITE_TIMEOUT_MS,
        'mqtt',
      );
      return { result: 'stored', statusCode: 201, body: counts };
    } catch (err) {
      if (err instanceof HttpError && err.statusCode < 500) return answer('rejected', err);
      if (isDatabaseUnavailable(err) || err instanceof HttpError) throw new NotStored();
      throw err;
    }
  }

  private parse(payload: Buffer): unknown {
    if (payload.length > this.settings.BODY_LIMIT)
      throw new HttpError(413, 'message is larger than the limit');
    if (!isUtf8(payload))
      throw badRequest('the message is not valid UTF-8', [
        { path: '/', message: 'not valid UTF-8' },
      ]);
    let value: unknown;
    try {
      // Keys that could poison a prototype are dropped (Fastify's parser refuses them over HTTP).
      const text = payload.toString('utf8');
      value = POISON.test(text)
        ? JSON.parse(text, (key, v: unknown) =>
            key === '__proto__' || key === 'constructor' ? undefined : v,
          )
        : JSON.parse(text);
    } catch (err) {
      throw badRequest(`the message is not JSON: ${(err as Error).message.slice(0, 200)}`);
    }
    const bad = badTextAt(value);
    if (bad)
      throw badRequest(`${bad.path || '/'}: ${bad.message}`, [
        { path: bad.path || '/', message: bad.message },
      ]);
    return value;
  }
}

const answer = (result: JsonResult, err: HttpError): JsonAnswer => ({
  result,
  statusCode: err.statusCode,
  body: errorBody(err.statusCode, err.message, err.details),
});
