import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Router } from 'express';
import { pino } from 'pino';
import { createHttpApp } from '../src/http/app.ts';
import { createRegistry } from '../src/http/openapi.ts';
import { documentOperation } from '../src/http/operation-doc.ts';
import { AppError } from '../src/shared/errors.ts';
import { http } from './support/http.ts';

// The error mapping in isolation: an unexpected exception must not leak its text, stack or SQL.
let server: ReturnType<ReturnType<typeof createHttpApp>['listen']>;
let url: string;
let healthy = true;

beforeAll(async () => {
  const router = Router();
  router.get('/boom', () => {
    throw new Error('relation "secret_table" does not exist at /srv/app/db.ts:42');
  });
  router.get('/stuck', () => new Promise(() => undefined));
  router.get('/conflict', () => {
    throw new AppError(409, 'EMAIL_TAKEN', 'That is taken', [{ path: 'body.x', message: 'taken' }]);
  });
  // The answers are checked against the app's document like any other: its routes say what they answer.
  const registry = createRegistry('apiKey');
  for (const [path, errors] of [['/boom', { 500: ['INTERNAL_ERROR'] }], ['/stuck', { 503: ['UNAVAILABLE'] }], ['/conflict', { 409: ['EMAIL_TAKEN'] }]] as const) {
    documentOperation(registry, { method: 'get', path, operationId: path.slice(1), summary: path, tags: [], security: [[]], responses: {}, errors });
  }
  const app = createHttpApp({
    name: 'test',
    logger: pino({ level: 'silent' }),
    bodyLimit: '1kb',
    requestDeadlineMs: 300,
    trustProxy: 'false',
    health: [{ name: 'database', check: async () => { if (!healthy) throw new Error('connection refused'); } }],
    metrics: async () => {
      if (!healthy) throw new Error('connection refused');
      return '# TYPE pix_payouts_unsettled gauge\npix_payouts_unsettled 0\n';
    },
    router,
    registry,
    document: { title: 'test', description: 'The error mapping', serverUrl: 'http://127.0.0.1' },
  });
  server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

test('an internal error is 500 INTERNAL_ERROR without internal details', async () => {
  const res = await http('GET', `${url}/boom`);
  expect(res.status).toBe(500);
  expect(res.body.code).toBe('INTERNAL_ERROR');
  expect(JSON.stringify(res.body)).not.toMatch(/secret_table|db\.ts|at /);
});

test('a request its dependencies leave unanswered gets 503 UNAVAILABLE with the error body at the deadline', async () => {
  const started = Date.now();
  const res = await http('GET', `${url}/stuck`);
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ code: 'UNAVAILABLE', message: expect.any(String) });
  expect(Date.now() - started).toBeLessThan(2000);
});

test('an AppError keeps its status, code, message and details', async () => {
  const res = await http('GET', `${url}/conflict`);
  expect(res.status).toBe(409);
  expect(res.body).toEqual({ code: 'EMAIL_TAKEN', message: 'That is taken', details: [{ path: 'body.x', message: 'taken' }] });
});

test('health is 503 naming the unreachable dependency', async () => {
  healthy = false;
  const res = await http('GET', `${url}/health`);
  healthy = true;
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ code: 'UNAVAILABLE', message: 'test cannot reach its dependencies', details: [{ path: 'database', message: 'connection refused' }] });
});

test('metrics are the Prometheus text, or 503 UNAVAILABLE when they cannot be read', async () => {
  const ok = await http('GET', `${url}/metrics`);
  expect(ok.status).toBe(200);
  expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(ok.body).toBe('# TYPE pix_payouts_unsettled gauge\npix_payouts_unsettled 0\n');
  healthy = false;
  const down = await http('GET', `${url}/metrics`);
  healthy = true;
  expect(down.status).toBe(503);
  expect(down.body).toEqual({ code: 'UNAVAILABLE', message: 'test cannot read its figures: connection refused' });
});
