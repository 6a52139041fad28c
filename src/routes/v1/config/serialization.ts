import { Type, type TObject, type TSchema } from '@sinclair/typebox';

// Schema rewrites the configuration DTOs are built with: the light form of a record, and the form
// of a response schema the serializer is given.

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isNull = (s: unknown) => isObject(s) && s.type === 'null';

/**
 * The same schema with each `T | null` union written as `type: [T, 'null']`. fast-json-stringify
 * tells those apart with typeof instead of running a validator per value (a whole site serializes
 * about ten times faster), and @fastify/swagger documents both alike (`nullable: true`).
 */
export function forSerialization(schema: unknown): TSchema {
  if (Array.isArray(schema)) return schema.map(forSerialization) as unknown as TSchema;
  if (!isObject(schema)) return schema as TSchema;
  const { anyOf, ...rest } = schema;
  if (
    Array.isArray(anyOf) &&
    anyOf.length === 2 &&
    isNull(anyOf[1]) &&
    isObject(anyOf[0]) &&
    typeof anyOf[0].type === 'string'
  ) {
    const inner = forSerialization(anyOf[0]) as Record<string, unknown>;
    return { ...rest, ...inner, type: [inner.type, 'null'] } as unknown as TSchema;
  }
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, forSerialization(v)]),
  ) as TSchema;
}

/**
 * The light form of a full record schema: nullable fields become optional and never null
 * (light responses strip null properties); `omit` fields are left out.
 */
export function lightOf(full: TObject, title: string, omit: string[] = []): TObject {
  const props: Record<string, TSchema> = {};
  for (const [name, s] of Object.entries(full.properties)) {
    if (omit.includes(name)) continue;
    const nonNull =
      Array.isArray(s.anyOf) && s.anyOf.some(isNull)
        ? (s.anyOf as TSchema[]).find((x) => !isNull(x))!
        : undefined;
    props[name] = nonNull ? Type.Optional(nonNull) : s;
  }
  return Type.Object(props, { title });
}
