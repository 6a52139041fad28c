// Route schemas stay whole (Ajv validates them as written); only the served document is rewritten:
// every schema with a `title` becomes one entry of components.schemas and a $ref wherever it was,
// so generated clients get the interface's type names (SensorLogDto) instead of anonymous shapes.

type Json = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

/** Values of these keywords are data, not schemas: a `title` inside them names nothing. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/** "Sensor scaling (light)" -> "SensorScalingLight": component names allow only [A-Za-z0-9._-]. */
export function componentName(title: string): string {
  return title
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** JSON with sorted keys, so two copies of one schema compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A JSON Pointer segment (RFC 6901): the places named in errors can be pasted into a viewer. */
const pointerToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The OpenAPI 3.0 schema of null and nothing else (3.0 has no `type: 'null'`): the form
 * @fastify/swagger gives the null member of `Type.Union([Type.Ref(…), Type.Null()])`, which Ajv
 * and validators that turn `nullable` into `type: [type, 'null']` (Prism) read alike.
 */
export const nullSchema = () => ({ type: 'object', nullable: true, enum: [null] });

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Lifts every titled schema of the document into components.schemas (named by componentName of
 * its title) and puts a $ref in its place; identical copies become one component. Two different
 * schemas with one name throw, naming both places: the document would otherwise lie about one.
 * A nullable use of a titled schema becomes `{ anyOf: [$ref, nullSchema()] }`: OpenAPI 3.0 ignores
 * siblings of a $ref, and `nullable` only adds null to the `type` of its own schema, so
 * `{ type, nullable: true, allOf: [$ref] }` still demands what the $ref demands (an object, never
 * null). The given document is not changed.
 */
export function liftTitledSchemas<T extends Json>(document: T): T {
  const doc = structuredClone(document) as Json;
  const components = (doc.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Record<string, Json>;
  const seen = new Map<string, { canon: string; where: string }>();

  const lift = (node: Json, where: string): Json => {
    const { nullable, ...schema } = visitChildren(node, where);
    const name = componentName(schema.title as string);
    const canon = canonical(schema);
    const known =
      seen.get(name) ??
      (schemas[name]
        ? { canon: canonical(schemas[name]), where: `${REF_PREFIX}${name}` }
        : undefined);
    if (known && known.canon !== canon) {
      throw new Error(
        `OpenAPI: two different schemas are both named ${name} (at ${known.where} and ${where}); give one its own title`,
      );
    }
    if (!known) {
      seen.set(name, { canon, where });
      schemas[name] = schema;
    }
    const ref = { $ref: `${REF_PREFIX}${name}` };
    return nullable === true ? { anyOf: [ref, nullSchema()] } : ref;
  };

  const visit = (value: unknown, where: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => visit(v, `${where}/${i}`));
    if (!isObject(value)) return value;
    return typeof value.title === 'string' && !('$ref' in value)
      ? lift(value, where)
      : visitChildren(value, where);
  };

  const visitChildren = (node: Json, where: string): Json =>
    Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        DATA_KEYWORDS.has(k) ? v : visit(v, `${where}/${pointerToken(k)}`),
      ]),
    );

  // Components already there (the error body) keep their names; their insides are lifted too.
  for (const [name, schema] of Object.entries(schemas))
    schemas[name] = visitChildren(schema, `${REF_PREFIX}${name}`);
  doc.paths = visit(doc.paths, '#/paths');
  return doc as T;
}
