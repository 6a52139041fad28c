import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import type { Queryable } from '../db/index.js';
import { parseTime } from '../time.js';
import { badTextAt } from '../text.js';
import type { Field } from '../schemas/records.js';
import { ProvisioningDocument } from './document.js';

/** A bad provisioning document: names the first bad record by its list, index and field. */
export class ImportError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** `/sensors/3/Name` -> `sensors[3].Name` */
function recordPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
}

/** What a value of a schema must be, for a message ("a positive integer", "null"). */
function describe(schema: TSchema): string {
  if (schema.description) return schema.description;
  if (schema[Kind] === 'Null') return 'null';
  if (schema[Kind] === 'Literal') return JSON.stringify(schema.const);
  if (schema[Kind] === 'Integer' && schema.minimum === 1)
    return `a positive integer${schema.maximum === undefined ? '' : ` (at most ${schema.maximum})`}`;
  const type = String(schema[Kind]).toLowerCase();
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * The first problem of a failed check, said plainly: TypeBox says "Expected union value" for a
 * nullable or string-or-number field, so a union names what it takes, or the deeper problem of a
 * value that had the right shape (`siteIds[1]`, not `siteIds`); an id says it must be positive.
 */
function problemOf(err: ValueError): { path: string; reason: string } {
  if (err.type === ValueErrorType.Union) {
    const deeper = err.errors
      .map((branch) => branch.First())
      .find((e) => e !== undefined && e.path.startsWith(`${err.path}/`));
    if (deeper) return problemOf(deeper);
    const forms: string[] = err.schema.description
      ? [err.schema.description]
      : (err.schema.anyOf as TSchema[]).map(describe);
    // "a string or an integer, or null": a form that has an "or" of its own is set apart.
    const joined = forms.join(forms.some((f) => f.includes(' or ')) ? ', or ' : ' or ');
    return { path: err.path, reason: `must be ${joined}` };
  }
  if (err.schema[Kind] === 'Integer' && err.schema.minimum === 1)
    return { path: err.path, reason: `must be ${describe(err.schema)}` };
  return { path: err.path, reason: err.message };
}

export function checkShape(input: unknown): ProvisioningDocument {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ImportError('(document)', 'must be a JSON object');
  const err = Value.Errors(ProvisioningDocument, input).First();
  if (err) {
    const { path, reason } = problemOf(err);
    throw new ImportError(recordPath(path) || '(document)', reason);
  }
  // A file read by the CLI has not been through the HTTP body checks: text the database cannot hold as written.
  const bad = badTextAt(input);
  if (bad) throw new ImportError(recordPath(bad.path) || '(document)', bad.message);
  return input as ProvisioningDocument;
}

/** Replaces every time field with its UTC ISO form; an unparsable time is an error at its place. */
export function normaliseTimes(
  list: string,
  records: Record<string, unknown>[] | undefined,
  fields: Field[],
): void {
  const timeFields = fields.filter((f) => f.kind === 'time').map((f) => f.name);
  records?.forEach((r, i) => {
    for (const name of timeFields) {
      const v = r[name];
      if (v === undefined || v === null) continue;
      const t = typeof v === 'string' ? parseTime(v) : undefined;
      if (t === undefined)
        throw new ImportError(
          `${list}[${i}].${name}`,
          `not an ISO 8601 date-time: ${JSON.stringify(v)}`,
        );
      r[name] = new Date(t).toISOString();
    }
  });
}

export function checkUnique(
  list: string,
  records: Record<string, unknown>[] | undefined,
  key: string,
): void {
  const seen = new Set<string>();
  records?.forEach((r, i) => {
    const k = String(r[key]);
    if (seen.has(k))
      throw new ImportError(`${list}[${i}].${key}`, `${key} ${k} appears twice in the document`);
    seen.add(k);
  });
}

const SITE_OF: Record<string, { table: string; id: string; site: string; type: string }> = {
  company: { table: 'companies', id: 'company_id', site: 'NULL::int', type: 'int' },
  site: { table: 'sites', id: 'site_id', site: 'site_id', type: 'int' },
  device: { table: 'modbus_devices', id: 'device_id', site: 'site_id', type: 'int' },
  register: { table: 'registers', id: 'register_id', site: 'site_id', type: 'bigint' },
  sensor: { table: 'sensors', id: 'sensor_id', site: 'site_id', type: 'int' },
  meter: { table: 'flow_meters', id: 'meter_id', site: 'site_id', type: 'int' },
  pump: { table: 'pumps', id: 'pump_id', site: 'site_id', type: 'int' },
  tank: { table: 'tank_groups', id: 'tank_group_id', site: 'site_id', type: 'int' },
  transaction: { table: 'transactions', id: 'transaction_id', site: 'site_id', type: 'int' },
  camera: { table: 'cameras', id: 'camera_id', site: 'site_id', type: 'int' },
};
export type RefKind = keyof typeof SITE_OF;

/**
 * Knows, for each kind of record, which ids exist and at which site: those in the document first,
 * then those already in the database (looked up once per kind, only for ids the document names).
 */
export class References {
  private readonly known = new Map<RefKind, Map<string, number | null>>();

  constructor(private readonly db: Queryable) {}

  add<R extends Record<string, unknown>>(
    kind: RefKind,
    records: R[] | undefined,
    idField: keyof R & string,
    siteOf: (r: R) => number | null,
  ) {
    const map = this.known.get(kind) ?? new Map();
    for (const r of records ?? []) map.set(String(r[idField]), siteOf(r));
    this.known.set(kind, map);
  }

  async load(kind: RefKind, ids: Iterable<unknown>): Promise<void> {
    const map = this.known.get(kind) ?? new Map<string, number | null>();
    this.known.set(kind, map);
    const wanted = [
      ...new Set([...ids].filter((v) => v !== null && v !== undefined).map(String)),
    ].filter((id) => !map.has(id));
    if (!wanted.length) return;
    const { table, id, site, type } = SITE_OF[kind];
    const rows = await this.db.query<{ id: string; site: number | null }>(
      `SELECT ${id}::text AS id, ${site} AS site FROM ${table} WHERE ${id} = ANY($1::${type}[])`,
      [wanted],
    );
    for (const r of rows) map.set(r.id, r.site);
  }

  /** The site of a known record; an ImportError at `path` when it does not exist (or is at another site). */
  siteOf(kind: RefKind, id: unknown, path: string, expectSite?: number): number | null {
    const map = this.known.get(kind);
    const key = String(id);
    if (!map?.has(key)) throw new ImportError(path, `${kind} ${key} does not exist`);
    const site = map.get(key)!;
    if (expectSite !== undefined && site !== expectSite)
      throw new ImportError(path, `${kind} ${key} belongs to site ${site}, not site ${expectSite}`);
    return site;
  }
}
