import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import type { Logger } from 'pino';
import swaggerUi from 'swagger-ui-express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { AppError, DomainError } from '../shared/errors.ts';
import { accessLog } from './access-log.ts';
import { answerTo, ERROR_CODES } from './error-codes.ts';
import { z } from '../shared/zod.ts';
import { documentOperation } from './operation-doc.ts';
import { generateDocument, type DocumentInfo } from './openapi.ts';
import { METRICS_CONTENT_TYPE } from './metrics.ts';
import { HTTP_LAYER_ERRORS } from './route.ts';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

export interface HttpAppOptions {
  name: string;
  logger: Logger;
  trustProxy: string;
  bodyLimit: string;
  /** Routes whose bodies may be larger (a batch payout's items), by method and path. */
  largeBodies?: { method: string; path: RegExp; limit: string }[];
  /** A request not answered by then gets 503 UNAVAILABLE (a dependency, usually the database, does not answer). */
  requestDeadlineMs: number;
  health: HealthCheck[];
  /** The figures of GET /metrics, in the Prometheus text format; public, so nothing in them may name a tenant. */
  metrics(): Promise<string>;
  router: Router;
  /** The routes' registry, completed here with what the app itself serves (/health, /metrics). */
  registry: OpenAPIRegistry;
  document: DocumentInfo;
}

/**
 * The interactive documentation: examples shown, and the credentials entered once in Authorize (X-Tenant-Id and the
 * bearer token on the holder API) kept across operations and reloads.
 */
const SWAGGER_UI_OPTIONS = { persistAuthorization: true, displayRequestDuration: true, tryItOutEnabled: true };

function documentHealth(registry: OpenAPIRegistry): void {
  documentOperation(registry, {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Whether the API reaches its database and Temporal',
    description: '503 UNAVAILABLE names each unreachable dependency in `details` (`database`, `temporal`).',
    tags: ['Health'],
    security: [[]],
    responses: { 200: { description: 'Both reachable', schema: z.object({ status: z.literal('ok') }).openapi('Health'), example: { status: 'ok' } } },
    errors: HTTP_LAYER_ERRORS,
  });
}

function documentMetrics(registry: OpenAPIRegistry): void {
  documentOperation(registry, {
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'The settlement backlog, for Prometheus',
    description:
      'Gauges in the Prometheus text exposition format: `pix_payouts_unsettled` and `pix_payouts_unsettled_oldest_age_seconds` (Pix payouts accepted and not settled yet, REQUESTED or PROCESSING), ' +
      '`workflow_handoffs_pending` and `workflow_handoffs_oldest_age_seconds` by `workflow_type` (hand-offs Temporal has not taken yet; a type with none has no sample). ' +
      'Platform-wide figures only: no tenant is named. 503 UNAVAILABLE when the database does not answer.',
    tags: ['Monitoring'],
    security: [[]],
    responses: {
      200: {
        description: 'The gauges',
        contentType: 'text/plain',
        schema: z.string(),
        example: '# HELP pix_payouts_unsettled Pix payouts accepted and not settled yet (REQUESTED or PROCESSING).\n# TYPE pix_payouts_unsettled gauge\npix_payouts_unsettled 0\n',
      },
    },
    errors: HTTP_LAYER_ERRORS,
  });
}

type RawBodyRequest = express.Request & { rawBody?: Buffer };

/** The body exactly as received (empty when there was none), for a signature over its bytes. */
export const rawBodyOf = (req: express.Request): Buffer => (req as RawBodyRequest).rawBody ?? Buffer.alloc(0);

/** Builds one of the two Express apps with the behaviour both share: ids, logs, limits, health, docs, errors. */
export function createHttpApp(options: HttpAppOptions): Express {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', parseTrustProxy(options.trustProxy));

  app.use(accessLog(logger));
  const json = (limit: string) =>
    express.json({
      limit,
      strict: true,
      type: ['application/json', 'application/*+json'],
      // Kept for the routes that verify a signature over the exact bytes received (the Pix provider's notifications).
      verify: (req, _res, raw) => {
        (req as { rawBody?: Buffer }).rawBody = raw;
      },
    });
  const parsers = (options.largeBodies ?? []).map((large) => ({ ...large, parse: json(large.limit) }));
  const parse = json(options.bodyLimit);
  app.use((req, res, next) => (parsers.find((p) => p.method === req.method && p.path.test(req.path))?.parse ?? parse)(req, res, next));
  app.use((_req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.status(503).json({ code: 'UNAVAILABLE', message: ERROR_CODES.UNAVAILABLE });
    }, options.requestDeadlineMs);
    res.once('close', () => clearTimeout(timer));
    next();
  });

  app.get('/health', async (_req, res) => {
    const failures: { path: string; message: string }[] = [];
    await Promise.all(
      options.health.map(async (h) => {
        try {
          await h.check();
        } catch (err) {
          failures.push({ path: h.name, message: err instanceof Error ? err.message : String(err) });
        }
      }),
    );
    if (failures.length === 0) res.status(200).json({ status: 'ok' });
    else res.status(503).json({ code: 'UNAVAILABLE', message: `${options.name} cannot reach its dependencies`, details: failures });
  });
  documentHealth(options.registry);
  app.get('/metrics', async (_req, res) => {
    let figures: string;
    try {
      figures = await options.metrics();
    } catch (err) {
      res.status(503).json({ code: 'UNAVAILABLE', message: `${options.name} cannot read its figures: ${err instanceof Error ? err.message : String(err)}` });
      return;
    }
    res.status(200).type(METRICS_CONTENT_TYPE).send(figures);
  });
  documentMetrics(options.registry);
  let document: object | undefined;
  const openapi = () => (document ??= generateDocument(options.registry, options.document));
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi());
  });
  // The page and its init script are this app's own: `swaggerUi.serve` keeps one init script per process, which the
  // holder and integration apps would overwrite for each other.
  const docs = { customSiteTitle: options.name, swaggerOptions: SWAGGER_UI_OPTIONS };
  app.use(
    '/docs',
    (req: express.Request & { swaggerDoc?: object }, _res: express.Response, next: express.NextFunction) => {
      req.swaggerDoc = openapi();
      next();
    },
    swaggerUi.serveFiles(undefined, docs),
    swaggerUi.setup(undefined, docs),
  );

  app.use(options.router);

  app.use((req, res) => {
    res.status(404).json({ code: 'NOT_FOUND', message: `No route for ${req.method} ${req.path}` });
  });
  app.use(errorHandler);
  return app;
}

/** Maps every failure to the error body of decisions.md; internals are logged, never returned. */
const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) return;
  if (err instanceof DomainError) {
    const { status, body } = answerTo(err);
    res.status(status).json(body);
    return;
  }
  if (err instanceof AppError) {
    res.status(err.status).json(err.toBody());
    return;
  }
  const failure = clientFailure(err);
  if (failure) {
    res.status(failure.status).json({ code: failure.code, message: failure.message });
    return;
  }
  req.log.error({ err }, 'unhandled error');
  res.status(500).json({ code: 'INTERNAL_ERROR', message: ERROR_CODES.INTERNAL_ERROR });
};

/** The client's mistakes that Express's own layers (body parsing, path decoding) report as errors with a 4xx status. */
function clientFailure(err: unknown): { status: number; code: string; message: string } | null {
  if ((err as { type?: string }).type === 'entity.parse.failed') return { status: 400, code: 'VALIDATION_ERROR', message: 'The request body is not valid JSON' };
  // The router percent-decodes path parameters: `%FF%FE`, a lone `%` or overlong UTF-8 (`%C0%AF`) cannot be decoded.
  if (err instanceof URIError) return { status: 400, code: 'VALIDATION_ERROR', message: 'A path segment is not valid percent-encoded UTF-8' };
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (status === 413) return { status, code: 'PAYLOAD_TOO_LARGE', message: ERROR_CODES.PAYLOAD_TOO_LARGE };
  if (status === 415) return { status, code: 'UNSUPPORTED_MEDIA_TYPE', message: ERROR_CODES.UNSUPPORTED_MEDIA_TYPE };
  return { status: 400, code: 'VALIDATION_ERROR', message: 'The request could not be read' };
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}
