import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { AppError } from '../shared/errors.ts';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

export interface HttpAppOptions {
  name: string;
  logger: Logger;
  trustProxy: string;
  bodyLimit: string;
  /** A request not answered by then gets 503 UNAVAILABLE (a dependency, usually the database, does not answer). */
  requestDeadlineMs: number;
  health: HealthCheck[];
  router: Router;
  openapi: () => object;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds one of the two Express apps with the behaviour both share: ids, logs, limits, health, docs, errors. */
export function createHttpApp(options: HttpAppOptions): Express {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', parseTrustProxy(options.trustProxy));

  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: req.url, headers: { 'x-tenant-id': req.headers['x-tenant-id'] } }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(express.json({ limit: options.bodyLimit, strict: true, type: ['application/json', 'application/*+json'] }));
  app.use((_req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.status(503).json({ code: 'UNAVAILABLE', message: 'The platform could not answer in time; retry later with the same Idempotency-Key' });
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
  let document: object | undefined;
  const openapi = () => (document ??= options.openapi());
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi());
  });
  app.use('/docs', swaggerUi.serve, (req: express.Request, res: express.Response, next: express.NextFunction) =>
    swaggerUi.setup(openapi(), { customSiteTitle: options.name })(req, res, next),
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
  if (err instanceof AppError) {
    res.status(err.status).json(err.toBody());
    return;
  }
  const type = (err as { type?: string }).type;
  if (type === 'entity.parse.failed') {
    res.status(400).json({ code: 'VALIDATION_ERROR', message: 'The request body is not valid JSON' });
    return;
  }
  if (type === 'entity.too.large') {
    res.status(413).json({ code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' });
    return;
  }
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    res.status(415).json({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as UTF-8 JSON' });
    return;
  }
  req.log.error({ err }, 'unhandled error');
  res.status(500).json({ code: 'INTERNAL_ERROR', message: 'Something went wrong on our side; the request id in X-Request-Id helps support find it' });
};

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}
