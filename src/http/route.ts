import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { NextFunction, Request, Response, Router } from 'express';
import { isStorableText, STORABLE_TEXT_RULE, z } from '../shared/zod.ts';
import { AppError, validationError, type ErrorDetail, type Raising } from '../shared/errors.ts';
import { ERROR_CODES, errorsRaisedBy, type ErrorsByStatus } from './error-codes.ts';
import { documentOperation, mergeErrors, type AnyObject, type OperationDoc, type SecurityRequirement } from './operation-doc.ts';

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

/** How a route proves who is calling; what it returns reaches the handler as `auth`. Its refusals are a refused caller's. */
export interface Authenticator<A> extends Raising {
  /** The OpenAPI security scheme it checks. */
  security: string;
  authenticate(req: Request, headers: Record<string, unknown>): Promise<A>;
}

/** A JSON answer, or one the handler writes itself in the media type the request accepted (a PDF, a streamed export). */
export type Reply =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { status: number; contentType: string; headers?: Record<string, string>; write(res: Response): Promise<void> };

/**
 * A route: its OpenAPI operation (`OperationDoc`, with the request schemas typed for the handler) and its handler.
 * Security and the errors every route answers are filled in by `defineRoute`.
 */
export interface RouteSpec<P extends AnyObject | undefined, Q extends AnyObject | undefined, H extends AnyObject | undefined, B extends z.ZodType | undefined, A>
  extends Omit<OperationDoc, 'params' | 'query' | 'headers' | 'body' | 'bodyExample' | 'security' | 'errors'> {
  params?: P;
  query?: Q;
  headers?: H;
  body?: B;
  /** A valid request body, shown in /docs. */
  bodyExample?: B extends z.ZodType ? z.input<B> : never;
  auth?: Authenticator<A>;
  /**
   * Alternatives, any one of which is enough. By default: `tenantId` when the route reads X-Tenant-Id, and the
   * authenticator's scheme; none for a public route.
   */
  security?: SecurityRequirement[];
  /**
   * The use cases the handler calls: their declared refusals are the operation's error codes, at the statuses of the
   * one table (error-codes.ts); route.ts adds what every route and its authenticator answer.
   */
  raises?: readonly Raising[];
  /** The media types the route answers, which Accept chooses (the first for any); the handler is told which (`accepted`). JSON when absent. */
  produces?: readonly string[];
  handler(input: { params: Infer<P>; query: Infer<Q>; headers: Infer<H>; body: Infer<B>; auth: A; accepted: string; req: Request; res: Response }): Promise<Reply>;
}

/**
 * What any request can be answered, whatever serves it: a refused input or body (the JSON layer reads a body on every
 * path), the HTTP server's limits, a failure, or the request deadline. Routes also refuse an Accept without a media type they answer.
 */
export const HTTP_LAYER_ERRORS: ErrorsByStatus = {
  400: ['VALIDATION_ERROR'],
  408: ['REQUEST_TIMEOUT'],
  413: ['PAYLOAD_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
  431: ['HEADERS_TOO_LARGE'],
  500: ['INTERNAL_ERROR'],
  503: ['UNAVAILABLE'],
};
const ROUTE_ERRORS = mergeErrors(HTTP_LAYER_ERRORS, { 406: ['NOT_ACCEPTABLE'] });

function defaultSecurity(headers: AnyObject | undefined, auth: Authenticator<unknown> | undefined): SecurityRequirement[] {
  return [[...(headers && 'x-tenant-id' in headers.shape ? ['tenantId'] : []), ...(auth ? [auth.security] : [])]];
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

/**
 * Mounts one route: headers are validated first (400), then the caller is authenticated (401), then params,
 * query and body (400). The same zod schemas are registered in the OpenAPI document, so the two cannot drift.
 */
export function defineRoute<P extends AnyObject | undefined, Q extends AnyObject | undefined, H extends AnyObject | undefined, B extends z.ZodType | undefined, A = undefined>(
  router: Router,
  registry: OpenAPIRegistry,
  spec: RouteSpec<P, Q, H, B, A>,
): void {
  documentOperation(registry, {
    ...spec,
    security: spec.security ?? defaultSecurity(spec.headers, spec.auth as Authenticator<unknown> | undefined),
    errors: mergeErrors(ROUTE_ERRORS, errorsRaisedBy([...(spec.auth ? [spec.auth] : []), ...(spec.raises ?? [])])),
  });

  const produces = [...(spec.produces ?? ['application/json'])];
  const notAcceptable = spec.produces ? `This endpoint answers ${produces.join(', ')}; send one of them in Accept` : ERROR_CODES.NOT_ACCEPTABLE;
  router[spec.method](spec.path, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const accepted = req.accepts(produces);
      if (!accepted) throw new AppError(406, 'NOT_ACCEPTABLE', notAcceptable);
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
      const reply = await spec.handler({ params, query, headers, body, auth, accepted, req, res } as never);
      // The request deadline answered already (503); the work itself finished, and a retry finds its result.
      if (res.headersSent) return;
      if (reply.headers) res.set(reply.headers);
      if ('write' in reply) {
        res.status(reply.status).type(reply.contentType);
        try {
          await reply.write(res);
        } catch (err) {
          if (!res.headersSent) throw err;
          // Part of the body is out: ending the connection, not the body, tells the client it is incomplete.
          req.log.error({ err }, 'answer failed while it was sent');
          res.destroy();
        }
        return;
      }
      res.status(reply.status).json(reply.body);
    } catch (err) {
      next(err);
    }
  });
}

