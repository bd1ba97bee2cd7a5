import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { httpPixProvider } from '../src/pix/http-provider.ts';
import { DomainError } from '../src/shared/errors.ts';

/**
 * The HTTP adapter to the Pix provider against a real HTTP server that answers as told: the bearer credential and the
 * body it sends, a 5xx tried again, an answer that never completes given up after the timeout, a redirect not followed.
 */
let server: Server;
let url: string;
const seen: { method: string; path: string; authorization: string | undefined; body: string }[] = [];
let answer: (req: IncomingMessage, res: ServerResponse, attempt: number) => void = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, body });
      answer(req, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const provider = () =>
  httpPixProvider(() => {
    throw new Error('no database here');
  }, { url, apiKey: 'the-provider-credential', timeoutMs: 300, publicBaseUrl: 'https://bank.example', allowedHosts: [], readPublicHosts: false });
const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const entry = { account: { participant: '12345678', participantName: 'Banco Exemplo', branch: '0001', accountNumber: '123456', accountType: 'CACC' }, owner: { taxIdNumber: '12345678909', name: 'Maria' } };

test('a key is asked with the credential: its owner, or null for 404', async () => {
  seen.length = 0;
  answer = (req, res) => (req.url!.includes('missing') ? json(res, 404, { code: 'NOT_FOUND' }) : json(res, 200, entry));
  await expect(provider().resolveKey('EMAIL', 'maria@example.com')).resolves.toEqual({ ispb: '12345678', institution: 'Banco Exemplo', name: 'Maria', document: '12345678909', branch: '0001', account: '123456', accountType: 'CACC' });
  await expect(provider().resolveKey('EMAIL', 'missing@example.com')).resolves.toBeNull();
  expect(seen.map((s) => [s.method, s.path, s.authorization])).toEqual([
    ['GET', '/dict/keys/EMAIL/maria%40example.com', 'Bearer the-provider-credential'],
    ['GET', '/dict/keys/EMAIL/missing%40example.com', 'Bearer the-provider-credential'],
  ]);
});

test('a 5xx is tried again, and the JSON body is sent whole each time', async () => {
  seen.length = 0;
  answer = (_req, res, attempt) => (attempt < 3 ? json(res, 503, { code: 'UNAVAILABLE' }) : json(res, 201, {}));
  await provider().returnPix({ endToEndId: 'D1', originalEndToEndId: 'E1', amountCents: 150n });
  expect(seen).toHaveLength(3);
  expect(seen.every((s) => s.method === 'POST' && s.path === '/returns' && JSON.parse(s.body).amountCents === '150')).toBe(true);
});

test('an answer that never completes is given up after the timeout, three times, then PIX_PROVIDER_UNAVAILABLE', async () => {
  seen.length = 0;
  answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).write('{"account":');
  const started = performance.now();
  const err = await provider().resolveKey('EVP', '123e4567-e89b-42d3-a456-426614174000').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).refusal).toBe('PIX_PROVIDER_UNAVAILABLE');
  expect((err as DomainError).code).toBe('UNAVAILABLE');
  expect(seen).toHaveLength(3);
  // Three timeouts of 300 ms and the backoffs of 200 and 400 ms between them.
  expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
});

test('a redirect is not followed: a refusal, asked once', async () => {
  seen.length = 0;
  answer = (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
  await expect(provider().queryPayout('p1')).rejects.toThrow('The Pix provider refused GET /payouts/p1: 302');
  expect(seen).toHaveLength(1);
});
