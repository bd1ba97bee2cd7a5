import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import {
  apiKey,
  fund,
  login,
  newCpf,
  newTenant,
  onboarded,
  PASSWORD,
  pixAccountIdOf,
  registeredWithAccount,
  tenantHeaders,
  type Onboarded,
  type Registered,
} from './support/fixtures.ts';
import { http, type HttpResult } from './support/http.ts';
import { expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, TEST_JWT_SECRET, type Platform } from './support/platform.ts';
import { tenantState } from './support/tenant-state.ts';

// Issue 13: every row of the black-box probe, as the request it sent, the status and body it must now get, and proof
// that nothing changed in the tenant (row counts, balances, holders).
let platform: Platform;
let tenantId: string;
let otherTenantId: string;
let alice: Onboarded;
let bob: Onboarded;
/** Registered, account provisioned, KYC not done. */
let pending: Registered & { accountId: string };
let alicePix: string;
let aliceKey: string;
let tenantKey: string;
let otherTenantKey: string;
let stranger: Onboarded;
/** A charge of alice's, paid, so a refund could move money. */
let paidChargeId: string;

beforeAll(async () => {
  platform = await startPlatform();
  [tenantId, otherTenantId] = await Promise.all([newTenant(platform), newTenant(platform)]);
  [alice, bob, pending, stranger] = await Promise.all([
    onboarded(platform, tenantId),
    onboarded(platform, tenantId),
    registeredWithAccount(platform, tenantId),
    onboarded(platform, otherTenantId),
  ]);
  alicePix = await pixAccountIdOf(platform, tenantId, alice.document);
  aliceKey = await apiKey(platform, tenantId, alicePix);
  const tenantKeyOf = async (t: string): Promise<string> => (await adminOk(platform.env, 'tenant-key:create', '--tenant', t)).key;
  [tenantKey, otherTenantKey] = await Promise.all([tenantKeyOf(tenantId), tenantKeyOf(otherTenantId)]);
  await fund(platform, tenantId, alice.account.id, 100_000);
  const charge = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges`, {
    body: { amountCents: '5000' },
    headers: { authorization: `Bearer ${aliceKey}`, 'idempotency-key': randomUUID() },
  });
  expect(charge.status).toBe(201);
  paidChargeId = charge.body.chargeId;
  const paid = await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${charge.body.txid}/pay`, {
    body: { payerName: 'Joana Pagadora', payerDocument: newCpf() },
    headers: tenantHeaders(tenantId),
  });
  expect(paid.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

let before: Awaited<ReturnType<typeof tenantState>>;
beforeEach(async () => {
  before = await tenantState(tenantId);
});
const expectNothingChanged = async () => expect(await tenantState(tenantId)).toEqual(before);

const asHolder = (h: Onboarded = alice) => tenantHeaders(h.tenantId, h.token);
const asIntegrator = () => ({ authorization: `Bearer ${aliceKey}`, 'idempotency-key': randomUUID() });
const statement = '?startDate=2020-01-01&endDate=2030-12-31';

function expectError(res: HttpResult, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { code, message: expect.any(String), ...(res.body?.details ? { details: expect.any(Array) } : {}) },
  });
}

function expectFieldRefused(res: HttpResult, path: string): void {
  expectError(res, 400, 'VALIDATION_ERROR');
  expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

describe('1. a malformed percent-escape or NUL in a path id is 400 VALIDATION_ERROR on both hosts', () => {
  const MALFORMED = ['%FF%FE', '%', '%C0%AF'];

  test.each(MALFORMED)('holder API, accountId %s', async (id) => {
    expectError(await http('GET', `${platform.holderUrl}/accounts/${id}/transactions${statement}`, { headers: asHolder() }), 400, 'VALIDATION_ERROR');
    expectError(await http('PUT', `${platform.holderUrl}/accounts/${id}/monthly-goal`, { body: { monthlyGoal: 1 }, headers: asHolder() }), 400, 'VALIDATION_ERROR');
    expectError(await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${id}`, { headers: asHolder() }), 400, 'VALIDATION_ERROR');
    expectError(await http('GET', `${platform.holderUrl}/onboarding/${id}`), 400, 'VALIDATION_ERROR');
    await expectNothingChanged();
  });

  test.each(MALFORMED)('integration API, ids %s', async (id) => {
    expectError(await http('GET', `${platform.apiUrl}/v1/tev/${id}`, { headers: asIntegrator() }), 400, 'VALIDATION_ERROR');
    expectError(await http('GET', `${platform.apiUrl}/v1/pix-accounts/${id}/fees`, { headers: asIntegrator() }), 400, 'VALIDATION_ERROR');
    expectError(await http('DELETE', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/webhooks/${id}`, { headers: asIntegrator() }), 400, 'VALIDATION_ERROR');
    await expectNothingChanged();
  });

  test('%00 in a non-UUID id is refused before it reaches PostgreSQL', async () => {
    for (const res of [
      await http('GET', `${platform.apiUrl}/v1/tev/%00`, { headers: asIntegrator() }),
      await http('GET', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges/%00`, { headers: asIntegrator() }),
      await http('DELETE', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/webhooks/ab%00cd`, { headers: asIntegrator() }),
      await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/payouts/%00`, { headers: asHolder() }),
    ]) {
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    expectFieldRefused(await http('GET', `${platform.apiUrl}/v1/tev/%00`, { headers: asIntegrator() }), 'params.id');
    await expectNothingChanged();
  });
});

describe('2. NUL or a lone surrogate in a free-text field is 400 naming the field, nothing written', () => {
  const BAD_TEXT = [
    ['NUL', 'Maria\u0000 da Silva'],
    ['a lone surrogate', '\uD800x Maria'],
  ] as const;

  test.each(BAD_TEXT)('name on /persons and /companies (%s)', async (_c, name) => {
    for (const [path, document] of [['persons', newCpf()], ['companies', '11222333000181']] as const) {
      const res = await http('POST', `${platform.holderUrl}/${path}`, {
        body: { name, document, email: `${randomUUID()}@example.com`, password: PASSWORD },
        headers: tenantHeaders(tenantId),
      });
      expectFieldRefused(res, 'body.name');
    }
    await expectNothingChanged();
  });

  test.each(BAD_TEXT)('description on both TEV routes and /pix/payment, externalRef, the charge tag (%s)', async (_c, text) => {
    const tevBody = { accountNumber: bob.account.number, amount: 1, pin: alice.pin };
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, { body: { ...tevBody, description: text }, headers: asHolder() }),
      'body.description',
    );
    const apiBody = { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents: '100' };
    expectFieldRefused(await http('POST', `${platform.apiUrl}/v1/tev`, { body: { ...apiBody, description: text }, headers: asIntegrator() }), 'body.description');
    expectFieldRefused(await http('POST', `${platform.apiUrl}/v1/tev`, { body: { ...apiBody, externalRef: text }, headers: asIntegrator() }), 'body.externalRef');
    const pixBody = { accountId: alice.account.id, pixKey: bob.document, pixKeyType: 'CPF', amount: 1, pin: alice.pin };
    expectFieldRefused(await http('POST', `${platform.holderUrl}/pix/payment`, { body: { ...pixBody, description: text }, headers: asHolder() }), 'body.description');
    expectFieldRefused(
      await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges`, { body: { amountCents: '100', tag: text }, headers: asIntegrator() }),
      'body.tag',
    );
    await expectNothingChanged();
  });

  test.each(BAD_TEXT)('sandbox payerName (%s)', async (_c, payerName) => {
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/sandbox/pix/incoming`, {
        body: { accountId: alice.account.id, amountCents: '100', payerName, payerDocument: newCpf() },
        headers: tenantHeaders(tenantId),
      }),
      'body.payerName',
    );
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${'A'.repeat(32)}/pay`, { body: { payerName, payerDocument: newCpf() }, headers: tenantHeaders(tenantId) }),
      'body.payerName',
    );
    await expectNothingChanged();
  });
});

describe('3. failed logins in one tenant do not lock out another tenant behind the same address', () => {
  const fromAddress = (address: string) => ({ 'x-forwarded-for': address });
  const passwordLogin = (tenant: string, document: string, password: string, address: string) =>
    http('POST', `${platform.holderUrl}/authenticate`, { body: { document, password }, headers: { ...tenantHeaders(tenant), ...fromAddress(address) } });
  const keyExchange = (tenant: string, key: string, document: string, address: string) =>
    http('POST', `${platform.holderUrl}/authenticate/clients`, { body: { document }, headers: { ...tenantHeaders(tenant), 'x-tenant-api-key': key, ...fromAddress(address) } });
  const wrongKey = `tnk_abcdefghijkl.${'A'.repeat(43)}`;

  test('30 failed passwords from one address: that tenant and address get 429; another tenant logs in and exchanges keys', async () => {
    const address = '203.0.113.77';
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await passwordLogin(tenantId, newCpf(), 'wrong-password-1', address)).status);
    expect(statuses).toEqual(Array(30).fill(401));
    expectError(await passwordLogin(tenantId, alice.document, PASSWORD, address), 429, 'RATE_LIMITED');

    expect((await passwordLogin(otherTenantId, stranger.document, PASSWORD, address)).status).toBe(200);
    expect((await keyExchange(otherTenantId, otherTenantKey, stranger.document, address)).status).toBe(200);
    // Failed passwords never block a valid tenant key exchange, not even in the tenant they were sent to.
    expect((await keyExchange(tenantId, tenantKey, alice.document, address)).status).toBe(200);
    await expectNothingChanged();
  });

  test('failed key exchanges are limited per tenant and address, and block nothing else', async () => {
    const address = '203.0.113.78';
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await keyExchange(tenantId, wrongKey, alice.document, address)).status);
    expect(statuses).toEqual(Array(30).fill(401));
    expectError(await keyExchange(tenantId, tenantKey, alice.document, address), 429, 'RATE_LIMITED');

    expect((await keyExchange(tenantId, tenantKey, alice.document, '203.0.113.79')).status).toBe(200);
    expect((await keyExchange(otherTenantId, otherTenantKey, stranger.document, address)).status).toBe(200);
    expect((await passwordLogin(tenantId, alice.document, PASSWORD, address)).status).toBe(200);
    await expectNothingChanged();
  });

  test('the per-document limit stays: 5 failures from 5 addresses block the document, even with the right password', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await passwordLogin(tenantId, bob.document, 'wrong-password-1', `198.18.0.${i + 1}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expectError(await passwordLogin(tenantId, bob.document, PASSWORD, '198.18.0.9'), 429, 'RATE_LIMITED');
    expect((await passwordLogin(tenantId, alice.document, PASSWORD, '198.18.0.9')).status).toBe(200);
    await expectNothingChanged();
  });
});

describe('4. holder JWTs the platform would never issue are 401', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: Record<string, unknown>) =>
    jwt.sign({ sub: alice.holder.id, tid: tenantId, type: 'PERSON', iat: now(), exp: now() + 600, ...claims }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
  const withoutExp = () => jwt.sign({ sub: alice.holder.id, tid: tenantId, type: 'PERSON', iat: now() }, TEST_JWT_SECRET, { algorithm: 'HS256' });

  test.each([
    ['no exp', withoutExp],
    ['an exp 100 years ahead', () => sign({ exp: now() + 100 * 365 * 86_400 })],
    ['an iat in the future', () => sign({ iat: now() + 600, exp: now() + 1200 })],
    ['a type that contradicts the holder', () => sign({ type: 'COMPANY' })],
    ['a non-UUID sub', () => sign({ sub: 'not-a-uuid' })],
    ['a sub with NUL', () => sign({ sub: `${alice.holder.id}\u0000` })],
    ['a kid that is not a key id', () => sign({ kid: "x'; drop table holder; --" })],
  ])('%s', async (_c, token) => {
    const res = await http('PUT', `${platform.holderUrl}/accounts/${alice.account.id}/monthly-goal`, {
      body: { monthlyGoal: 123.45 },
      headers: tenantHeaders(tenantId, token()),
    });
    expectError(res, 401, 'UNAUTHORIZED');
    await expectNothingChanged();
  });

  test('a token as issued still works', async () => {
    const res = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions${statement}`, { headers: tenantHeaders(tenantId, sign({})) });
    expect(res.status).toBe(200);
  });
});

describe('5. amounts: cents are digits only, reais a JSON number', () => {
  const amountCents = ' 10 ';

  test('" 10 " as amountCents on /v1/tev, charges, refunds and sandbox incoming', async () => {
    expectFieldRefused(
      await http('POST', `${platform.apiUrl}/v1/tev`, {
        body: { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents },
        headers: asIntegrator(),
      }),
      'body.amountCents',
    );
    expectFieldRefused(await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges`, { body: { amountCents }, headers: asIntegrator() }), 'body.amountCents');
    expectFieldRefused(
      await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges/${paidChargeId}/refunds`, { body: { amountCents }, headers: asIntegrator() }),
      'body.amountCents',
    );
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/sandbox/pix/incoming`, {
        body: { accountId: alice.account.id, amountCents, payerName: 'Pagador', payerDocument: newCpf() },
        headers: tenantHeaders(tenantId),
      }),
      'body.amountCents',
    );
    await expectNothingChanged();
  });

  test.each(['10', ' 10 ', '10.00'])('"amount": %p (text) on the holder TEV and /pix/payment', async (amount) => {
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, {
        body: { accountNumber: bob.account.number, amount, pin: alice.pin },
        headers: asHolder(),
      }),
      'body.amount',
    );
    expectFieldRefused(
      await http('POST', `${platform.holderUrl}/pix/payment`, {
        body: { accountId: alice.account.id, pixKey: bob.document, pixKeyType: 'CPF', amount, pin: alice.pin },
        headers: asHolder(),
      }),
      'body.amount',
    );
    await expectNothingChanged();
  });

  test('cents as a JSON integer or a string of digits, and reais as a JSON number, still move money', async () => {
    const tev = await http('POST', `${platform.apiUrl}/v1/tev`, {
      body: { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents: '10' },
      headers: asIntegrator(),
    });
    expect(tev.body).toMatchObject({ kind: 'done', amountCents: '10' });
    const holderTev = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, {
      body: { accountNumber: bob.account.number, amount: 0.1, pin: alice.pin },
      headers: asHolder(),
    });
    expect(holderTev.body.tev).toMatchObject({ kind: 'done', amountCents: '10' });
  });
});

describe('6. webhook URLs and authTokens', () => {
  const register = (body: Record<string, unknown>) =>
    http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/webhooks`, {
      body: { url: 'https://example.com/hooks', events: ['pix.in.received'], authToken: 'whsec-hardening-token-0123456789', ...body },
      headers: asIntegrator(),
    });

  test.each([
    ['credentials', 'https://user:pass@example.com/'],
    ['a user name only', 'https://user@example.com/'],
    ['no slashes after the scheme', 'https:example.com'],
    ['three slashes', 'https:///example.com'],
    ['a backslash before @', 'https://example.com\\@127.0.0.1/'],
    ['a blank', 'https://example.com/ hooks'],
    ['a line feed', 'https://example.com/\nhooks'],
    ['another scheme', 'http://example.com/'],
  ])('a URL with %s is 400, nothing stored', async (_c, url) => {
    expectFieldRefused(await register({ url }), 'body.url');
    await expectNothingChanged();
  });

  test.each([
    ['CR/LF', 'whsec-0123456789\r\nX-Injected: 1'],
    ['one character', 'x'],
    ['NUL', 'whsec-0123456789\u0000abcdef'],
    ['a tab', 'whsec-0123456789\tabcdef'],
    ['non-ASCII text', 'whsec-0123456789-ção-abcdef'],
  ])('an authToken with %s is 400, nothing stored', async (_c, authToken) => {
    expectFieldRefused(await register({ authToken }), 'body.authToken');
    await expectNothingChanged();
  });

  test('the canonical URL is stored and returned, and the list never shows credentials', async () => {
    const res = await register({ url: 'HTTPS://Example.COM:443/hooks/../pix?x=1' });
    expect(res.status).toBe(201);
    expect(res.body.url).toBe('https://example.com/pix?x=1');
    const [row] = await sql('select url from webhook_endpoint where id = $1', [res.body.id]);
    expect(row.url).toBe('https://example.com/pix?x=1');
    const listed = await http('GET', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/webhooks?limit=100`, { headers: asIntegrator() });
    expect(listed.body.webhooks.find((w: { id: string }) => w.id === res.body.id).url).toBe('https://example.com/pix?x=1');
    expect(listed.body.webhooks.every((w: { url: string }) => !new URL(w.url).username && !new URL(w.url).password)).toBe(true);
  });
});

describe("7. one tenant cannot complete another tenant's onboarding", () => {
  test("tenant B's X-Tenant-Id with tenant A's requisition is 404; the holder is not activated", async () => {
    const requisition = pending.holder.onboardingRequisitionId;
    const completed = await http('POST', `${platform.holderUrl}/onboarding/${requisition}/complete`, { body: {}, headers: tenantHeaders(otherTenantId) });
    expectError(completed, 404, 'NOT_FOUND');
    expectError(await http('GET', `${platform.holderUrl}/onboarding/${requisition}`, { headers: { 'x-tenant-id': otherTenantId } }), 404, 'NOT_FOUND');
    await expectNothingChanged();
    const [holder] = await sql('select status, onboarding_step from holder where id = $1', [pending.holder.id]);
    expect(holder).toEqual({ status: 'PENDING', onboarding_step: 'PENDING' });
  });

  test("with the holder's own tenant's X-Tenant-Id it completes (the sandbox page's form sends none and completes too)", async () => {
    const res = await http('POST', `${platform.holderUrl}/onboarding/${pending.holder.onboardingRequisitionId}/complete`, { body: {}, headers: tenantHeaders(tenantId) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ACTIVE', onboardingStep: 'DONE', accountStatus: 'APPROVED' });
  });
});

describe('8. oversized headers are 431 with the JSON error body', () => {
  test.each([
    ['a 100 KB header', () => ({ ...tenantHeaders(tenantId), 'x-filler': 'a'.repeat(100_000) })],
    ['a 20 KB X-Tenant-Id', () => ({ 'x-tenant-id': 'a'.repeat(20_000) })],
  ])('%s, on both hosts', async (_c, headers) => {
    for (const url of [`${platform.holderUrl}/persons`, `${platform.apiUrl}/v1/tev`]) {
      const res = await http('POST', url, { body: { name: 'Maria da Silva' }, headers: headers() });
      expectError(res, 431, 'HEADERS_TOO_LARGE');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
    await expectNothingChanged();
  });
});

describe('9. an unknown X-Tenant-Id is 400 UNKNOWN_TENANT on /authenticate, as on registration', () => {
  test('/authenticate and /persons answer the same', async () => {
    const unknown = randomUUID();
    expectError(await login(platform, { tenantId: unknown, document: alice.document, password: PASSWORD }), 400, 'UNKNOWN_TENANT');
    const registration = await http('POST', `${platform.holderUrl}/persons`, {
      body: { name: 'Maria da Silva', document: newCpf(), email: `${randomUUID()}@example.com`, password: PASSWORD },
      headers: tenantHeaders(unknown),
    });
    expectError(registration, 400, 'UNKNOWN_TENANT');
    await expectNothingChanged();
  });
});
