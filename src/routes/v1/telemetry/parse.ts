import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest, type ErrorDetail } from '../../../errors.js';
import { KIND_LIST, KINDS, type Entry, type TelemetryKind } from '../../../telemetry/kinds.js';
import { parseTime } from '../../../time.js';
import { LOG_DTO, READING_DTO } from './schema.js';

// From a body that passed its route's schema to entries ready to write: times parsed and checked
// (contract 1), generic entries routed by their one id field and checked as that record.

export type Role = 'log' | 'reading';
type Body = Record<string, unknown>;

const DAY = 86_400_000;

/** Same settings as the route validator (plugins/validation.ts): strict types, unknown properties ignored. */
const ajv = new Ajv({
  coerceTypes: false,
  removeAdditional: true,
  allErrors: false,
  strict: false,
});
(addFormats as unknown as (a: Ajv) => void)(ajv);
const validators: Record<Role, Record<TelemetryKind, ValidateFunction>> = {
  log: Object.fromEntries(KIND_LIST.map((k) => [k.kind, ajv.compile(LOG_DTO[k.kind])])) as Record<
    TelemetryKind,
    ValidateFunction
  >,
  reading: Object.fromEntries(
    KIND_LIST.map((k) => [k.kind, ajv.compile(READING_DTO[k.kind])]),
  ) as Record<TelemetryKind, ValidateFunction>,
};

const ID_FIELDS = KIND_LIST.map((k) => [k.idField, k.kind] as const);

const invalid = (path: string, problem: string) => {
  const detail: ErrorDetail = { path, message: `${path} ${problem}` };
  return badRequest(`validation failed: ${detail.message}`, [detail]);
};

/** What the entries of one request share: the time it arrived, and the times already parsed (a batch repeats them). */
interface Clock {
  now: number;
  seen: Map<string, number>;
}
const clock = (): Clock => ({ now: Date.now(), seen: new Map() });

function parseUploadTime(text: string, path: string, c: Clock): number {
  const known = c.seen.get(text);
  if (known !== undefined) return known;
  const t = parseTime(text);
  if (t === undefined) throw invalid(path, 'is not an ISO 8601 date-time');
  if (t > c.now + DAY) throw invalid(path, 'is more than 24 h in the future');
  // Before 1970 is an edge device's unset clock, not telemetry.
  if (t < 0) throw invalid(path, 'is before 1970-01-01T00:00:00Z');
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
  return { kind, id: body[spec.idField] as number, ts, values, record, index };
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
    const present = ID_FIELDS.filter(([field]) => b[field] !== undefined);
    if (present.length !== 1)
      throw invalid(
        at,
        `must have exactly one id field of sensorID, flowMeterID, sitePumpID, siteTankGroupID${present.length ? ` (has ${present.map(([f]) => f).join(', ')})` : ''}`,
      );
    const kind = present[0][1];
    const validate = validators[role][kind];
    if (!validate(b)) {
      const issue = validate.errors![0];
      let path = `${at}${issue.instancePath}`;
      if (issue.keyword === 'required') path += `/${String(issue.params.missingProperty)}`;
      throw invalid(path, issue.message ?? 'is invalid');
    }
    return toEntry(kind, role, b, i, at, now);
  });
}
