import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { REQUEST_ID_PATTERN } from './openapi.ts';

declare module 'http' {
  interface IncomingMessage {
    /** The request's id: the client's `X-Request-Id` when it is well formed, else a new one. */
    id: string;
    /** Lines about this request, each naming it as the access line does. */
    log: Logger;
  }
}

/** What a line says of its request: no header but the tenant's, so no credential ever reaches it. */
interface RequestSummary {
  id: string;
  method: string;
  url: string;
  headers: { 'x-tenant-id': string | string[] | undefined };
}

/**
 * Gives every request its id (answered in `X-Request-Id`) and writes one line when it is answered, or when the client
 * went away first: `request completed` at info, at warn for a 4xx, `request errored` at error for a 5xx, with the
 * request, its status and the milliseconds it took (`responseTime`).
 *
 * The line is written by the process's logger itself. `req.log`, the logger a handler writes its own lines with, is
 * made the first time a handler asks for it, which few requests do. pino-http, which this replaces, made that logger
 * for every request and serialized the request into it; with the batched writes of src/logger.ts, the api's CPU per
 * TEV fell 4% (bench/README.md).
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    req.id = id;
    const summary: RequestSummary = { id, method: req.method, url: req.originalUrl, headers: { 'x-tenant-id': req.headers['x-tenant-id'] } };
    let requestLogger: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, enumerable: false, get: () => (requestLogger ??= logger.child({ req: summary })) });

    const started = Date.now();
    const answered = () => {
      res.off('finish', answered);
      res.off('close', answered);
      const line = { req: summary, res: { statusCode: res.statusCode }, responseTime: Date.now() - started };
      if (res.statusCode >= 500) logger.error({ ...line, err: new Error(`failed with status code ${res.statusCode}`) }, 'request errored');
      else if (res.statusCode >= 400) logger.warn(line, 'request completed');
      else logger.info(line, 'request completed');
    };
    res.on('finish', answered);
    res.on('close', answered);
    next();
  };
}
