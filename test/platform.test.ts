import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(async () => {
  await platform?.stop();
});

describe.each([
  ['holder API', () => platform.holderUrl],
  ['integration API', () => platform.apiUrl],
])('%s', (_name, url) => {
  test('GET /health answers 200 once the database and Temporal are reachable', async () => {
    const res = await http('GET', `${url()}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('GET /openapi.json is an OpenAPI 3.1 document', async () => {
    const res = await http('GET', `${url()}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.components.schemas.Error.required).toEqual(['code', 'message']);
  });

  test('GET /docs serves the interactive documentation page', async () => {
    const res = await fetch(`${url()}/docs/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('swagger-ui');
  });

  test('an unknown route is 404 NOT_FOUND with the error body', async () => {
    const res = await http('GET', `${url()}/no/such/route`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'No route for GET /no/such/route' });
  });

  test('a body that is not JSON is 400 VALIDATION_ERROR', async () => {
    const res = await http('POST', `${url()}/anything`, { body: '{"broken": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: 'The request body is not valid JSON' });
  });

  test('a body over the size limit is 413 with the error body', async () => {
    const res = await http('POST', `${url()}/anything`, { body: { blob: 'x'.repeat(200_000) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  test('every response carries a request id, echoing a sane one given by the caller', async () => {
    const given = await http('GET', `${url()}/health`, { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const generated = await http('GET', `${url()}/health`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
