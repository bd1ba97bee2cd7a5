import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { NextFunction, Request, Response, Router } from 'express';
import { isStorableText, STORABLE_TEXT_RULE, z } from '../shared/zod.ts';
import { AppError, validationError, type ErrorDetail } from '../shared/errors.ts';
import { ErrorBody } from './openapi.ts';

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

/** How a route proves who is calling; what it returns reaches the handler as `auth`. */
export interface Authenticator<A> {
  security: string;
  authenticate(req: Request, headers: Record<string, unknown>): Promise<A>;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends AnyObject | undefined, Q extends AnyObject | undefined, H extends AnyObject | undefined, B extends z.ZodType | undefined, A> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express form, e.g. `/accounts/:accountId`; the OpenAPI path is derived. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  headers?: H;
  body?: B;
  auth?: Authenticator<A>;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler(input: { params: Infer<P>; query: Infer<Q>; headers: Infer<H>; body: Infer<B>; auth: A; req: Request; res: Response }): Promise<Reply>;
}

export function issuesToDetails(prefix: string, error: z.ZodError): ErrorDetail[] {
  return error.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].join('.'), message: i.message }));
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(`Invalid request ${where}`, issuesToDetails(where, result.error));
  return result.data;
}

/**
 * Decoded path and query values reach SQL, logs and responses: whatever a route's own schema allows, a control
 * character (`%00` among them) or an unpaired surrogate in one is 400 on every route.
 */
function assertStorable(values: Record<string, unknown>, where: 'params' | 'query'): void {
  const refused = Object.entries(values)
    .filter(([, value]) => [value].flat().some((v) => typeof v === 'string' && !isStorableText(v)))
    .map(([name]) => ({ path: `${where}.${name}`, message: STORABLE_TEXT_RULE }));
  if (refused.length > 0) throw validationError(`Invalid request ${where}`, refused);
}

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid input (VALIDATION_ERROR)',
  401: 'Missing, invalid, expired or revoked credentials',
  404: 'Not found',
  500: 'Internal error',
};

/**
 * Mounts one route: headers are validated first (400), then the caller is authenticated (401), then params,
 * query and body (400). The same zod schemas are registered in the OpenAPI document, so the two cannot drift.
 */
export function defineRoute<P extends AnyObject | undefined, Q extends AnyObject | undefined, H extends AnyObject | undefined, B extends z.ZodType | undefined, A = undefined>(
  router: Router,
  registry: OpenAPIRegistry,
  spec: RouteSpec<P, Q, H, B, A>,
): void {
  const responses: RouteConfig['responses'] = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status] = r.schema ? { description: r.description, content: { 'application/json': { schema: r.schema } } } : { description: r.description };
  }
  const errorStatuses = new Set([400, 500, ...(spec.auth ? [401] : []), ...(spec.params ? [404] : [])]);
  for (const status of errorStatuses) {
    responses[status] ??= { description: STANDARD_ERRORS[status] ?? 'Error', content: { 'application/json': { schema: ErrorBody } } };
  }
  registry.registerPath({
    method: spec.method,
    path: spec.path.replace(/:(\w+)/g, '{$1}'),
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    security: spec.auth ? [{ [spec.auth.security]: [] }] : undefined,
    request: {
      params: spec.params as AnyObject | undefined,
      query: spec.query as AnyObject | undefined,
      headers: spec.headers as AnyObject | undefined,
      body: spec.body ? { content: { 'application/json': { schema: spec.body } }, required: true } : undefined,
    },
    responses,
  });

  router[spec.method](spec.path, async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!req.accepts('application/json')) throw new AppError(406, 'NOT_ACCEPTABLE', 'This endpoint answers application/json; send Accept: application/json');
      const headers = spec.headers ? parse(spec.headers, req.headers, 'headers') : undefined;
      const auth = spec.auth ? await spec.auth.authenticate(req, (headers ?? {}) as Record<string, unknown>) : undefined;
      assertStorable(req.params, 'params');
      assertStorable(req.query as Record<string, unknown>, 'query');
      const params = spec.params ? parse(spec.params, req.params, 'params') : undefined;
      const query = spec.query ? parse(spec.query, req.query, 'query') : undefined;
      if (spec.body && req.body === undefined) {
        throw validationError('The request needs a JSON body with Content-Type: application/json');
      }
      const body = spec.body ? parse(spec.body, req.body, 'body') : undefined;
      const reply = await spec.handler({ params, query, headers, body, auth, req, res } as never);
      // The request deadline answered already (503); the work itself finished, and a retry finds its result.
      if (res.headersSent) return;
      if (reply.headers) res.set(reply.headers);
      res.status(reply.status).json(reply.body);
    } catch (err) {
      next(err);
    }
  });
}

