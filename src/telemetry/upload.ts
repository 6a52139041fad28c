import type { ValidateFunction } from 'ajv';
import { invalidField } from '../errors.js';
import { checkBody, bodyValidator } from '../schemas/validator.js';
import { parseEdgeTime } from '../time.js';
import type { Role } from './jobs.js';
import { ID_FIELDS, KIND_LIST, KINDS, makeEntry, type Entry, type TelemetryKind } from './kinds.js';
import { LOG_DTO, READING_DTO } from './records.js';

// From a body that passed its route's schema to entries ready to write: times parsed and checked
// (contract 1), generic entries routed by their one id field and checked as that record.

type Body = Record<string, unknown>;

/** Each record schema compiled once by the service's one validator, as a route body is. */
const validators: Record<Role, Record<TelemetryKind, ValidateFunction>> = {
  log: Object.fromEntries(
    KIND_LIST.map((k) => [k.kind, bodyValidator.compile(LOG_DTO[k.kind])]),
  ) as Record<TelemetryKind, ValidateFunction>,
  reading: Object.fromEntries(
    KIND_LIST.map((k) => [k.kind, bodyValidator.compile(READING_DTO[k.kind])]),
  ) as Record<TelemetryKind, ValidateFunction>,
};

/** Each id field with the kind it routes a generic entry to. */
const ROUTES = KIND_LIST.map((k) => [k.idField, k.kind] as const);

/** What the entries of one request share: the time it arrived, and the times already parsed (a batch repeats them). */
interface Clock {
  now: number;
  seen: Map<string, number>;
}
const clock = (): Clock => ({ now: Date.now(), seen: new Map() });

function parseUploadTime(text: string, path: string, c: Clock): number {
  const known = c.seen.get(text);
  if (known !== undefined) return known;
  const t = parseEdgeTime(text, path, c.now);
  c.seen.set(text, t);
  return t;
}

/** One entry that already has its record's shape; `prefix` is its JSON pointer in the body. */
function toEntry(
  kind: TelemetryKind,
  role: Role,
  body: Body,
  index: number,
  prefix: string,
  now: Clock,
): Entry {
  const spec = KINDS[kind];
  const ts = parseUploadTime(body.timestamp as string, `${prefix}/timestamp`, now);
  const values: unknown[] = new Array(spec.fields.length);
  const record: Record<string, unknown> | undefined =
    role === 'reading' ? { [spec.idField]: body[spec.idField] } : undefined;
  for (let i = 0; i < spec.fields.length; i++) {
    const field = spec.fields[i];
    let v = body[field.name];
    if (v === undefined) {
      values[i] = null;
      continue;
    }
    if (field.type === 'timestamptz' && v !== null)
      v = new Date(parseUploadTime(v as string, `${prefix}/${field.name}`, now)).toISOString();
    values[i] = v;
    if (record) record[field.name] = v;
  }
  if (record) record.timestamp = new Date(ts).toISOString();
  return makeEntry(kind, body[spec.idField] as number, ts, values, record, index);
}

/** Entries of a single or batch route, whose schema has already checked every record's shape. */
export function parseEntries(
  kind: TelemetryKind,
  role: Role,
  bodies: Body[],
  prefix = '',
): Entry[] {
  const now = clock();
  return bodies.map((b, i) => toEntry(kind, role, b, i, `${prefix}/${i}`, now));
}

export function parseEntry(kind: TelemetryKind, role: Role, body: Body): Entry {
  return toEntry(kind, role, body, 0, '', clock());
}

/** Entries of a generic route: each routed by exactly one id field, then checked as that kind's record. */
export function parseGeneric(role: Role, bodies: Body[], prefix = ''): Entry[] {
  const now = clock();
  return bodies.map((b, i) => {
    const at = `${prefix}/${i}`;
    const present = ROUTES.filter(([field]) => b[field] !== undefined);
    if (present.length !== 1)
      throw invalidField(
        at,
        `must have exactly one id field of ${ID_FIELDS.join(', ')}${present.length ? ` (has ${present.map(([f]) => f).join(', ')})` : ''}`,
      );
    const kind = present[0][1];
    checkBody(validators[role][kind], b, at);
    return toEntry(kind, role, b, i, at, now);
  });
}
