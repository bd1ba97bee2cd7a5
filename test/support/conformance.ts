import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';

/**
 * Every answer the test suites receive is checked against the OpenAPI document of the host that served it, the
 * document it publishes at /openapi.json: the status must be documented for the operation, the body must match that
 * status's schema (error codes included), the documented headers must be there. A path the document does not list
 * may only answer what the document's description says of it: 404 NOT_FOUND, or an error of the HTTP layer.
 */

type Json = Record<string, unknown>;
interface MediaType {
  schema?: Json;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, { $ref?: string; required?: boolean }>;
  content?: Record<string, MediaType>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
  requestBody?: { content?: Record<string, MediaType> };
  parameters?: { $ref?: string; in?: string; name?: string; required?: boolean; schema?: Json }[];
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; responses?: Record<string, ResponseObject>; headers?: Record<string, { required?: boolean }> };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else its text. */
  body: unknown;
}

/** What any request may be answered before (or instead of) reaching an operation, by status. */
const UNROUTED: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  404: 'NOT_FOUND',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL_ERROR',
  503: 'UNAVAILABLE',
};

/** The pages that document the API itself: only their status and content type are checked. */
const DOCUMENTATION = [
  { path: /^\/openapi\.json$/, contentType: 'application/json' },
  { path: /^\/docs(\/.*)?$/, contentType: /^(text\/html|text\/css|application\/javascript|image\/png)/ },
];

const COMPONENTS_ID = 'openapi-components.json';
const mime = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** The document with its schema references pointed at one registered schema of the components. */
function retarget<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`)) as T;
}

function newAjv(schemas: Record<string, Json>): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  // OpenAPI's own annotations, which JSON Schema does not know.
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  (addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: retarget(schemas) });
  return ajv;
}

const describe = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

export class PublishedDocument {
  private readonly ajv: Ajv2020;
  private readonly routes: { method: string; pattern: RegExp; template: string; operation: Operation }[];
  private readonly validators = new Map<string, ValidateFunction>();
  readonly document: OpenApiDocument;

  constructor(document: OpenApiDocument) {
    this.document = document;
    this.ajv = newAjv(document.components.schemas);
    this.routes = Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        method: method.toUpperCase(),
        // Express matches case-insensitively and forgives one trailing slash.
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`, 'i'),
        template,
        operation,
      })),
    );
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(retarget(schema));
      this.validators.set(key, validate);
    }
    return validate;
  }

  private resolveResponse(response: ResponseObject): ResponseObject {
    if (!response.$ref) return response;
    const name = response.$ref.replace('#/components/responses/', '');
    const resolved = this.document.components.responses?.[name];
    if (!resolved) throw new Error(`${response.$ref} is not in the document`);
    return resolved;
  }

  private headerRequired(header: { $ref?: string; required?: boolean }): boolean {
    if (!header.$ref) return header.required === true;
    return this.document.components.headers?.[header.$ref.replace('#/components/headers/', '')]?.required === true;
  }

  /** What is wrong with a body against a schema of the document; empty when nothing is. */
  schemaProblems(key: string, schema: Json, body: unknown): string[] {
    const validate = this.validator(key, schema);
    return validate(body) ? [] : [describe(validate.errors)];
  }

  /** Everything about one answer that the document does not allow; empty when it conforms. */
  problems(method: string, path: string, answer: Answer): string[] {
    const route = this.routes.find((r) => r.method === method && r.pattern.test(path));
    if (route) return this.operationProblems(`${method} ${route.template}`, route.operation, answer);
    const page = DOCUMENTATION.find((d) => d.path.test(path));
    if (page && method === 'GET') {
      const type = mime(answer.headers.get('content-type'));
      if (answer.status === 200 && !(typeof page.contentType === 'string' ? type === page.contentType : page.contentType.test(type))) return [`content type ${type}`];
      return answer.status === 200 || answer.status === 301 || answer.status === 304 ? [] : [`status ${answer.status} of a documentation page`];
    }
    const code = UNROUTED[answer.status];
    if (!code) return [`status ${answer.status} for a path and method the document does not list`];
    return this.schemaProblems(`unrouted ${code}`, { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { code: { const: code } } }] }, answer.body);
  }

  private operationProblems(key: string, operation: Operation, answer: Answer): string[] {
    const documented = operation.responses[String(answer.status)] ?? operation.responses[`${String(answer.status)[0]}XX`] ?? operation.responses.default;
    if (!documented) return [`status ${answer.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`];
    const response = this.resolveResponse(documented);
    const problems = Object.entries(response.headers ?? {})
      .filter(([name, header]) => this.headerRequired(header) && !answer.headers.has(name))
      .map(([name]) => `header ${name} is missing`);
    if (!response.content) return problems;
    const type = mime(answer.headers.get('content-type'));
    const media = response.content[type];
    if (!media) return [...problems, `content type ${type || '(none)'} is not documented (documented: ${Object.keys(response.content).join(', ')})`];
    if (type !== 'application/json' || !media.schema) return problems;
    return [...problems, ...this.schemaProblems(`${key} ${answer.status}`, media.schema, answer.body)];
  }

  /** What is wrong with an event's `{ event, data }` body against the document's `webhooks`. */
  eventProblems(body: unknown): string[] {
    const event = (body as { event?: unknown } | null)?.event;
    const schema = typeof event === 'string' ? this.document.webhooks?.[event]?.post?.requestBody?.content?.['application/json']?.schema : undefined;
    if (!schema) return [`event ${String(event)} is not among the document's webhooks`];
    return this.schemaProblems(`webhook ${event}`, schema, body);
  }

  /** What is wrong with a webhook delivery: its headers and its body. */
  deliveryProblems(headers: Record<string, string | string[] | undefined>, body: unknown): string[] {
    const event = String((body as { event?: unknown } | null)?.event);
    const parameters = this.document.webhooks?.[event]?.post?.parameters ?? [];
    const missing = parameters.filter((p) => p.in === 'header' && p.required && headers[p.name!.toLowerCase()] === undefined).map((p) => `header ${p.name} is missing`);
    return [...missing, ...this.eventProblems(body)];
  }
}

const documents = new Map<string, Promise<PublishedDocument>>();

/** The document a host publishes, fetched once per origin (again after a failed fetch). */
export function publishedDocument(origin: string): Promise<PublishedDocument> {
  let pending = documents.get(origin);
  if (!pending) {
    pending = fetch(`${origin}/openapi.json`, { headers: { accept: 'application/json' } }).then(async (res) => {
      if (res.status !== 200) throw new Error(`${origin}/openapi.json answered ${res.status}`);
      return new PublishedDocument((await res.json()) as OpenApiDocument);
    });
    pending.catch(() => documents.delete(origin));
    documents.set(origin, pending);
  }
  return pending;
}

/** Answers that did not conform in this test file, kept even where a caller swallows the error. */
export const nonConforming: string[] = [];

/** Throws (and records) when an answer does not conform to the document of the host that served it. */
export async function expectConforms(method: string, url: string, answer: Answer): Promise<void> {
  const { origin, pathname } = new URL(url);
  const problems = (await publishedDocument(origin)).problems(method.toUpperCase(), pathname, answer);
  if (problems.length === 0) return;
  const summary = `${method.toUpperCase()} ${pathname} answered ${answer.status}, which ${origin}/openapi.json does not allow: ${problems.join(' | ')}; body ${JSON.stringify(answer.body)?.slice(0, 500)}`;
  nonConforming.push(summary);
  throw new Error(summary);
}

/** `fetch` that checks every answer like `http` does: for clients (openapi-fetch) the tests drive. */
export const conformingFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const res = await fetch(request);
  const text = await res.clone().text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (HTML pages)
  }
  await expectConforms(request.method, request.url, { status: res.status, headers: res.headers, body });
  return res;
};
