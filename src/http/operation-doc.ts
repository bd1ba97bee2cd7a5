import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from '../shared/zod.ts';
import { ERROR_CODES, type ErrorCode, type ErrorsByStatus } from './error-codes.ts';
import { errorExample, errorSchema, HEADER_SCHEMES, REQUEST_ID_HEADER, REQUEST_ID_PARAMETER } from './openapi.ts';

/** Any zod object schema: the shape of params, query and headers. */
export type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The media types a response body is documented in. */
export type ContentType =
  | 'application/json'
  | 'text/html'
  | 'text/plain'
  | 'application/jose'
  | 'application/problem+json'
  | 'application/pdf'
  | 'text/csv'
  | 'application/x-ofx';

/** One documented response: its body (JSON unless said otherwise) with an example of it. */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  example?: unknown;
  contentType?: ContentType;
  /** The same answer in other media types, which the request's Accept chooses (a receipt as a PDF). */
  alternatives?: readonly { contentType: ContentType; schema: z.ZodType; example?: unknown }[];
  headers?: Record<string, { description: string; schema: { type: 'string' } }>;
}

/** A security requirement: the schemes that must all be present (an empty one: none needed). */
export type SecurityRequirement = string[];

export interface OperationDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express form, e.g. `/accounts/:accountId`; the OpenAPI path is derived. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: AnyObject | undefined;
  query?: AnyObject | undefined;
  headers?: AnyObject | undefined;
  body?: z.ZodType | undefined;
  bodyExample?: unknown;
  /** Alternatives, any one of which is enough; `[[]]` for a public operation. */
  security: SecurityRequirement[];
  /** The answers that are not errors, business outcomes included (a rejected TEV is a 422 with its own body). */
  responses: Record<number, ResponseDoc>;
  /** Every error code the operation can answer, by status. */
  errors: ErrorsByStatus;
}

/** Merges lists of codes by status, each code once. */
export function mergeErrors(...lists: ErrorsByStatus[]): ErrorsByStatus {
  const merged: Partial<Record<number, ErrorCode[]>> = {};
  for (const list of lists) {
    for (const [status, codes] of Object.entries(list)) merged[Number(status)] = [...new Set([...(merged[Number(status)] ?? []), ...(codes ?? [])])];
  }
  return merged;
}

/** A header that is a credential of the operation's security is documented there, not as a parameter. */
function documentedHeaders(headers: AnyObject | undefined, security: SecurityRequirement[]): AnyObject | undefined {
  if (!headers) return undefined;
  const schemes = new Set(security.flat());
  const credentials = Object.entries(HEADER_SCHEMES).filter(([scheme, header]) => schemes.has(scheme) && header in headers.shape).map(([, header]) => header);
  if (credentials.length === 0) return headers;
  const rest = headers.omit(Object.fromEntries(credentials.map((h) => [h, true])));
  return Object.keys(rest.shape).length > 0 ? rest : undefined;
}

function response(r: ResponseDoc) {
  const headers = { ...REQUEST_ID_HEADER, ...r.headers };
  const content = Object.fromEntries(
    [...(r.schema ? [{ contentType: r.contentType ?? 'application/json', schema: r.schema, example: r.example }] : []), ...(r.alternatives ?? [])].map((m) => [
      m.contentType,
      { schema: m.schema, example: m.example },
    ]),
  );
  if (Object.keys(content).length === 0) return { description: r.description, headers };
  return { description: r.description, headers, content };
}

/** Answered by the HTTP parser before a request exists: no request id is given to them. */
const PARSER_ERRORS: readonly ErrorCode[] = ['HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT'];
const errorHeaders = (codes: readonly ErrorCode[]) => (codes.some((c) => PARSER_ERRORS.includes(c)) ? {} : REQUEST_ID_HEADER);

function errorResponse(codes: readonly ErrorCode[]) {
  return {
    description: codes.join(', '),
    headers: errorHeaders(codes),
    content: { 'application/json': { schema: errorSchema(codes), example: errorExample(codes[0]!) } },
  };
}

/** Responses of one code only, shared by the operations of a document (most are the HTTP layer's, on every one). */
const sharedErrorResponses = new WeakMap<OpenAPIRegistry, Set<ErrorCode>>();

function singleCodeResponse(registry: OpenAPIRegistry, code: ErrorCode) {
  const registered = sharedErrorResponses.get(registry) ?? new Set();
  sharedErrorResponses.set(registry, registered);
  if (!registered.has(code)) {
    // Components are raw OpenAPI: the error schema of one code, written out as errorSchema would generate it.
    const schema = { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object' as const, properties: { code: { type: 'string' as const, enum: [code], description: ERROR_CODES[code] } } }] };
    registry.registerComponent('responses', code, { description: code, headers: errorHeaders([code]), content: { 'application/json': { schema, example: errorExample(code) } } });
    registered.add(code);
  }
  return { $ref: `#/components/responses/${code}` };
}

/** Registers one operation in an OpenAPI document: every status with its body, error codes and examples. */
export function documentOperation(registry: OpenAPIRegistry, doc: OperationDoc): void {
  const responses: RouteConfig['responses'] = {};
  for (const [status, r] of Object.entries(doc.responses)) responses[status] = response(r);
  for (const [status, codes] of Object.entries(doc.errors)) {
    if (codes?.length === 1) responses[status] = singleCodeResponse(registry, codes[0]!);
    else if (codes && codes.length > 1) responses[status] = errorResponse(codes);
  }
  registry.registerPath({
    method: doc.method,
    path: doc.path.replace(/:(\w+)/g, '{$1}'),
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: doc.tags,
    security: doc.security.map((schemes) => Object.fromEntries(schemes.map((s) => [s, []]))),
    parameters: [REQUEST_ID_PARAMETER],
    request: {
      params: doc.params,
      query: doc.query,
      headers: documentedHeaders(doc.headers, doc.security),
      body: doc.body ? { content: { 'application/json': { schema: doc.body, example: doc.bodyExample } }, required: true } : undefined,
    },
    responses,
  });
}
