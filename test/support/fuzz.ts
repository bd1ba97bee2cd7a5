/**
 * Bad values for the inputs an OpenAPI document declares, derived from each input's schema: the wrong JSON type,
 * too long, control characters and unpaired surrogates, malformed percent-escapes. Every value here must be refused
 * by the platform with a 4xx and its error body.
 */

export interface Schema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  maxLength?: number;
  minLength?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
}

export interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  method: string;
  /** OpenAPI form, e.g. `/accounts/{accountId}`. */
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
}

interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components?: { schemas?: Record<string, Schema> };
}

/** A schema with its `$ref`, `allOf` and `oneOf` branches resolved against the document's components. */
export function resolve(doc: Document, schema: Schema | undefined): Schema {
  if (!schema) return {};
  if (schema.$ref) return resolve(doc, doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
  if (schema.allOf) {
    const parts = schema.allOf.map((s) => resolve(doc, s));
    return {
      ...schema,
      allOf: undefined,
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: parts.flatMap((p) => p.required ?? []),
    };
  }
  // A union (a body of several kinds): each branch resolved, so the branch a request is can be fuzzed field by field.
  if (schema.oneOf) return { ...schema, oneOf: schema.oneOf.map((branch) => resolve(doc, branch)) };
  return schema;
}

export function operationsOf(doc: Document): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      parameters: (op.parameters ?? []).map((p) => ({ ...p, schema: resolve(doc, p.schema) })),
      body: op.requestBody?.content?.['application/json']?.schema ? resolve(doc, op.requestBody.content['application/json'].schema) : undefined,
    })),
  );
}

/** The JSON types a schema admits (`anyOf`/`oneOf` branches included). */
function typesOf(schema: Schema): Set<string> {
  const own = schema.type === undefined ? [] : [schema.type].flat();
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap((s) => [...typesOf(s)]);
  return new Set([...own, ...branches]);
}

const CONTROL_TEXT = ['a\u0000b', '\uD800x', 'x\u0007y', '\u001B[31m', 'x\u007Fy'];

/** Values of the wrong JSON type for a body field. */
function wrongTypes(types: Set<string>): unknown[] {
  const values: unknown[] = [null];
  const numeric = types.has('number') || types.has('integer');
  if (!types.has('string')) values.push('10', ' 10 ');
  if (!numeric) values.push(12345);
  if (types.has('integer') && !types.has('number')) values.push(10.5);
  if (!types.has('boolean')) values.push(true);
  if (!types.has('object')) values.push({ nested: 'x' });
  if (!types.has('array')) values.push(['x']);
  if (types.has('string') && numeric) values.push(' 10 ', '-10', '1e3');
  return values;
}

/** Bad values for one body field, from its schema. */
export function badBodyValues(schema: Schema): unknown[] {
  const types = typesOf(schema);
  const values = wrongTypes(types);
  if (schema.enum) values.push('NOT_ONE_OF_THEM');
  if (types.has('string')) {
    values.push('x'.repeat((schema.maxLength ?? 4096) + 1), ...CONTROL_TEXT);
    if ((schema.minLength ?? 0) > 0) values.push('');
  }
  if (types.has('number') || types.has('integer')) values.push(-1, 1e21, 0.001);
  if (types.has('array')) values.push([12345], CONTROL_TEXT.slice(0, 2), Array(1000).fill('x'));
  return values;
}

/** Raw (already percent-encoded) path segments a path parameter must refuse, whatever its schema. */
export const BAD_PATH_SEGMENTS = ['%FF%FE', '%', '%C0%AF', '%E0%80', '%00', 'a%00b', '%0A', '%1B', 'x'.repeat(600), '-1', encodeURIComponent("'; select 1; --")];

/** Raw (already percent-encoded) query values a query parameter must refuse, from its schema. */
export function badQueryValues(schema: Schema): string[] {
  const values = ['%00', 'a%00b', '%FF%FE', '%', '%1B', '9'.repeat(400), 'x'.repeat(600)];
  const types = typesOf(schema);
  if (types.has('integer') || types.has('number')) values.push('abc', '1.5', '-1', '0', '1e2', '%201%20');
  if (schema.format === 'date') values.push('2024-02-30', '2024-1-1', 'yesterday');
  if (schema.enum) values.push('NOT_ONE_OF_THEM');
  return values;
}

/** Whole request bodies that are not a JSON object; an empty body counts as `{}`, so only where a field is required. */
export function badBodies(schema: Schema): string[] {
  return ['[]', '"text"', '42', 'null', '{"unclosed": ', '{"a": 1}}', ...((schema.required ?? []).length > 0 ? [''] : [])];
}
