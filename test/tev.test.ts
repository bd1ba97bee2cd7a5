import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, registeredWithAccount, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let aliceKey: string;
let alicePix: string;
beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId, 'COMPANY')]);
  alicePix = await pixAccountIdOf(platform, tenantId, alice.document);
  aliceKey = await apiKey(platform, tenantId, alicePix);
  await fund(platform, tenantId, alice.account.id, 1_000_000);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const pay = (from: Onboarded, body: Record<string, unknown>, headers: Record<string, string> = {}, token = from.token) =>
  http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, { body: { pin: from.pin, ...body }, headers: { ...tenantHeaders(from.tenantId, token), ...headers } });
const apiTev = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  http('POST', `${platform.apiUrl}/v1/tev`, { body, headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID(), ...headers } });
const getTev = (key: string, id: string, headers: Record<string, string> = {}) => http('GET', `${platform.apiUrl}/v1/tev/${id}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
const events = (tevId: string) => sql(`select type, account_id, pix_account_id, data from event_outbox where data->>'tevTransferId' = $1 order by type`, [tevId]);
const movementCount = async () => Number((await sql('select count(*)::int as n from movement where tenant_id = $1', [tenantId]))[0].n);

describe('holder TEV (two steps)', () => {
  test('beneficiary lookup by document returns the unmasked document and the accounts able to receive', async () => {
    const res = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/beneficiary`, { body: { document: bob.document }, headers: tenantHeaders(tenantId, alice.token) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ beneficiary: { name: 'Padaria Pão Quente LTDA', document: bob.document, accounts: [{ id: bob.account.id, accountNumber: bob.account.number, agency: bob.account.agency, bank: '000', trustedContact: false }] } });
  });

  test('an unknown document, or a holder of another tenant, is 404 BENEFICIARY_NOT_FOUND', async () => {
    const stranger = await onboarded(platform, await newTenant(platform));
    for (const document of [stranger.document, '52998224725']) {
      const res = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/beneficiary`, { body: { document }, headers: tenantHeaders(tenantId, alice.token) });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('BENEFICIARY_NOT_FOUND');
    }
  });

  test('payment with fees: balances, fee revenue, both sides readable, events for each side', async () => {
    const t = await newTenant(platform);
    await adminOk(platform.env, 'fees:set', '--tenant', t, '--tev-out-cents', '150', '--tev-in-cents', '50');
    const [payer, payee] = await Promise.all([onboarded(platform, t), onboarded(platform, t)]);
    await fund(platform, t, payer.account.id, 10_000);
    const res = await pay(payer, { accountNumber: payee.account.number, amount: 12.34, description: 'Aluguel de novembro' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tev: { kind: 'done', tevId: expect.stringMatching(/^[a-z][a-z0-9]{23}$/), status: 'DONE', amountCents: '1234', feeCents: '150' } });
    const tevId = res.body.tev.tevId;
    expect(await balanceOf(payer.account.id)).toBe(10_000n - 1234n - 150n);
    expect(await balanceOf(payee.account.id)).toBe(1234n - 50n);
    const [revenue] = await sql(`select balance_cents from account where tenant_id = $1 and kind = 'FEE_REVENUE'`, [t]);
    expect(revenue.balance_cents).toBe('200');

    const [payerPix, payeePix] = [await pixAccountIdOf(platform, t, payer.document), await pixAccountIdOf(platform, t, payee.document)];
    const [payerKey, payeeKey] = [await apiKey(platform, t, payerPix), await apiKey(platform, t, payeePix)];
    const out = await getTev(payerKey, tevId);
    expect(out.body).toEqual({
      id: tevId, status: 'DONE', direction: 'out', amountCents: '1234', feeCents: '150', description: 'Aluguel de novembro', externalRef: null,
      destination: { branch: payee.account.agency, account: payee.account.number }, createdAt: expect.stringMatching(/Z$/), resolvedAt: expect.stringMatching(/Z$/),
    });
    const into = await getTev(payeeKey, tevId);
    expect(into.body).toMatchObject({ direction: 'in', feeCents: '50', origin: { branch: payer.account.agency, account: payer.account.number } });
    expect(into.body.destination).toBeUndefined();

    const evs = await events(tevId);
    expect(evs.map((e) => [e.type, e.pix_account_id])).toEqual([['tev.in.received', payeePix], ['tev.out.succeeded', payerPix]]);
    const [inEvent, outEvent] = evs;
    const [outMovement] = await sql(`select id from movement where operation_id = $1 and source = 'TEF_OUT'`, [tevId]);
    const [inMovement] = await sql(`select id from movement where operation_id = $1 and source = 'TEF_IN'`, [tevId]);
    expect(outEvent.data).toEqual({
      tevTransferId: tevId, movementId: outMovement.id, endToEndId: expect.stringMatching(/^.{36}$/), amountCents: '1234', feeCents: '150', externalRef: null,
      description: 'Aluguel de novembro', payerAccount: payer.account.number, payerBranch: payer.account.agency, beneficiaryAccount: payee.account.number,
      beneficiaryBranch: payee.account.agency, occurredAt: expect.any(String),
    });
    expect(inEvent.data).toEqual({ ...outEvent.data, movementId: inMovement.id, feeCents: '50' });
    await expectLedgerConsistent(t);
  });

  test('the default description names the beneficiary', async () => {
    const res = await pay(alice, { accountNumber: bob.account.number, amount: 1 });
    const [row] = await sql('select description from tev_transfer where id = $1', [res.body.tev.tevId]);
    expect(row.description).toBe('Transferência para Padaria Pão Quente LTDA');
  });

  test.each([
    ['to its own account', 400, 'SAME_ACCOUNT', () => ({ accountNumber: alice.account.number, amount: 1 })],
    ['to an unknown account number', 400, 'DESTINATION_NOT_FOUND', () => ({ accountNumber: '999999999', amount: 1 })],
    ['with 3 decimal places', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: 10.001 })],
    ['with amount 0', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: 0 })],
    ['with a negative amount', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: -5 })],
    ['with amount as text', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: 'dez' })],
    ['with a 141-character description', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: 1, description: 'x'.repeat(141) })],
    ['without PIN', 400, 'VALIDATION_ERROR', () => ({ accountNumber: bob.account.number, amount: 1, pin: undefined })],
    ['with a wrong PIN', 403, 'INVALID_PIN', () => ({ accountNumber: bob.account.number, amount: 1, pin: '9517' })],
  ])('payment %s is %i %s and moves nothing', async (_c, status, code, body) => {
    const before = await movementCount();
    const res = await pay(alice, body());
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(await movementCount()).toBe(before);
    if (code === 'INVALID_PIN') await sql('update holder set pin_failed_attempts = 0 where id = $1', [alice.holder.id]);
  });

  test("another holder's account is 404; another tenant's token is 401", async () => {
    const res = await http('POST', `${platform.holderUrl}/accounts/${bob.account.id}/tev/payment`, { body: { accountNumber: alice.account.number, amount: 1, pin: alice.pin }, headers: tenantHeaders(tenantId, alice.token) });
    expect(res.status).toBe(404);
    const stranger = await onboarded(platform, await newTenant(platform));
    expect((await pay(alice, { accountNumber: bob.account.number, amount: 1 }, {}, stranger.token)).status).toBe(401);
  });

  test('a holder whose KYC is not done gets 403 ONBOARDING_INCOMPLETE on TEV operations', async () => {
    const fresh = await registeredWithAccount(platform, tenantId);
    for (const [path, body] of [['tev/payment', { accountNumber: bob.account.number, amount: 1, pin: '2580' }], ['tev/beneficiary', { document: bob.document }]] as const) {
      const res = await http('POST', `${platform.holderUrl}/accounts/${fresh.accountId}/${path}`, { body, headers: tenantHeaders(tenantId, fresh.token) });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('ONBOARDING_INCOMPLETE');
    }
  });

  test('a PIN-exempt tenant: client tokens pay without PIN; password tokens still need it', async () => {
    const t = await newTenant(platform, { pinExempt: true });
    const [payer, payee] = await Promise.all([onboarded(platform, t), onboarded(platform, t)]);
    await fund(platform, t, payer.account.id, 500);
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', t);
    const client = await http('POST', `${platform.holderUrl}/authenticate/clients`, { body: { document: payer.document }, headers: { ...tenantHeaders(t), 'x-tenant-api-key': key.key } });
    const exempt = await pay(payer, { accountNumber: payee.account.number, amount: 1, pin: undefined }, {}, client.body.token);
    expect(exempt.status).toBe(200);
    expect((await pay(payer, { accountNumber: payee.account.number, amount: 1, pin: undefined })).status).toBe(400);
    await expectLedgerConsistent(t);
  });
});

describe('integration TEV (one step)', () => {
  test('branch and account with or without leading zeros; amountCents as string or number', async () => {
    const a = await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: `000${bob.account.number}`, amountCents: 250 });
    const b = await apiTev(aliceKey, { destinationBranch: '0001', destinationAccount: bob.account.number, amountCents: '250', externalRef: `ref-${randomUUID()}` });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual({ kind: 'done', tevId: expect.any(String), status: 'DONE', amountCents: '250', feeCents: '0' });
  });

  test('the same Idempotency-Key and body returns the original result and moves no money; another body is 409', async () => {
    const key = randomUUID();
    const body = { destinationBranch: '0001', destinationAccount: bob.account.number, amountCents: '777' };
    const first = await apiTev(aliceKey, body, { 'idempotency-key': key });
    const balance = await balanceOf(alice.account.id);
    const second = await apiTev(aliceKey, body, { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await balanceOf(alice.account.id)).toBe(balance);
    const conflict = await apiTev(aliceKey, { ...body, amountCents: '778' }, { 'idempotency-key': key });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await balanceOf(alice.account.id)).toBe(balance);
  });

  test('externalRef is unique per source account: 409, nothing moves', async () => {
    const ref = `invoice-${randomUUID()}`;
    expect((await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 1, externalRef: ref })).status).toBe(200);
    const before = await balanceOf(alice.account.id);
    const dup = await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 2, externalRef: ref });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('EXTERNAL_REF_TAKEN');
    expect(await balanceOf(alice.account.id)).toBe(before);
  });

  test('insufficient balance is 422 rejected: nothing moved, FAILED, tev.out.failed', async () => {
    const poor = await onboarded(platform, tenantId);
    const key = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, poor.document));
    await fund(platform, tenantId, poor.account.id, 100);
    const res = await apiTev(key, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: '101' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ kind: 'rejected', tevId: expect.any(String), status: 'FAILED', reason: 'INSUFFICIENT_BALANCE', providerStatusCode: 422 });
    expect(await balanceOf(poor.account.id)).toBe(100n);
    expect((await getTev(key, res.body.tevId)).body).toMatchObject({ status: 'FAILED', direction: 'out', resolvedAt: expect.any(String) });
    const evs = await events(res.body.tevId);
    expect(evs.map((e) => e.type)).toEqual(['tev.out.failed']);
    expect(evs[0].data).toMatchObject({ reason: 'INSUFFICIENT_BALANCE', movementId: null, amountCents: '101' });
    // The destination never sees a transfer that did not happen.
    const bobKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, bob.document));
    expect((await getTev(bobKey, res.body.tevId)).status).toBe(404);
  });

  test('a blocked destination is 422 DESTINATION_NOT_ACTIVE; an amount above the limit is 422 AMOUNT_ABOVE_LIMIT', async () => {
    const carol = await onboarded(platform, tenantId);
    await adminOk(platform.env, 'holder:block', '--tenant', tenantId, '--document', carol.document);
    const blocked = await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: carol.account.number, amountCents: 10 });
    expect(blocked.status).toBe(422);
    expect(blocked.body.reason).toBe('DESTINATION_NOT_ACTIVE');
    const big = await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: '100000001' });
    expect(big.status).toBe(422);
    expect(big.body.reason).toBe('AMOUNT_ABOVE_LIMIT');
  });

  test.each([
    ['no Idempotency-Key', 400, () => ({ headers: { 'idempotency-key': '' } })],
    ['unknown destination', 400, () => ({ body: { destinationAccount: '987654321' } })],
    ['its own account', 400, () => ({ body: { destinationAccount: alice.account.number } })],
    ['amountCents with decimals', 400, () => ({ body: { amountCents: '10.5' } })],
    ['amountCents 0', 400, () => ({ body: { amountCents: 0 } })],
    ['amountCents negative', 400, () => ({ body: { amountCents: -5 } })],
    ['a 129-character externalRef', 400, () => ({ body: { externalRef: 'r'.repeat(129) } })],
    ['a branch with letters', 400, () => ({ body: { destinationBranch: '00a1' } })],
    ['no API key', 401, () => ({ headers: { authorization: '' } })],
    ['a malformed API key', 401, () => ({ headers: { authorization: 'Bearer abc' } })],
    ['a tenant key instead of an API key', 401, () => ({ headers: { authorization: `Bearer tnk_abcdefghijkl.${'a'.repeat(43)}` } })],
    ['X-Pix-Account-Id outside the key', 403, () => ({ headers: { 'x-pix-account-id': 'someoneelse' } })],
  ])('%s: %i and nothing moves', async (_c, status, change) => {
    const { body = {}, headers = {} } = change() as { body?: Record<string, unknown>; headers?: Record<string, string> };
    const before = await movementCount();
    const h = Object.fromEntries(Object.entries({ authorization: `Bearer ${aliceKey}`, 'idempotency-key': randomUUID(), ...headers }).filter(([, v]) => v !== ''));
    const res = await http('POST', `${platform.apiUrl}/v1/tev`, { body: { destinationBranch: '0001', destinationAccount: bob.account.number, amountCents: '10', ...body }, headers: h });
    expect(res.status).toBe(status);
    expect(res.body.code).toEqual(expect.any(String));
    expect(await movementCount()).toBe(before);
  });

  test('a revoked API key is 401', async () => {
    const created = await adminOk(platform.env, 'api-key:create', '--tenant', tenantId, '--pix-account', alicePix);
    await adminOk(platform.env, 'api-key:revoke', '--id', created.id);
    const res = await apiTev(created.key, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 1 });
    expect(res.status).toBe(401);
  });

  test('a key reaching several accounts must name one in X-Pix-Account-Id', async () => {
    const bobPix = await pixAccountIdOf(platform, tenantId, bob.document);
    const both = await apiKey(platform, tenantId, alicePix, bobPix);
    const missing = await apiTev(both, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 1 });
    expect(missing.status).toBe(400);
    const named = await apiTev(both, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 1 }, { 'x-pix-account-id': alicePix });
    expect(named.status).toBe(200);
    expect((await getTev(both, named.body.tevId, { 'x-pix-account-id': bobPix })).body.direction).toBe('in');
  });

  test('GET /v1/tev/:id of an unrelated account is 404', async () => {
    const res = await apiTev(aliceKey, { destinationBranch: '1', destinationAccount: bob.account.number, amountCents: 3 });
    const carol = await onboarded(platform, tenantId);
    const carolKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, carol.document));
    expect((await getTev(carolKey, res.body.tevId)).status).toBe(404);
    expect((await getTev(aliceKey, 'nonexistent')).status).toBe(404);
  });

  test('fees come from GET /v1/pix-accounts/:id/fees: an account override beats the tenant schedule', async () => {
    const t = await newTenant(platform);
    const h = await onboarded(platform, t);
    const pix = await pixAccountIdOf(platform, t, h.document);
    const key = await apiKey(platform, t, pix);
    const fees = () => http('GET', `${platform.apiUrl}/v1/pix-accounts/${pix}/fees`, { headers: { authorization: `Bearer ${key}` } });
    expect((await fees()).body).toEqual({ pixAccountId: pix, tevOutFeeCents: '0', tevInFeeCents: '0', pixOutFeeCents: '0', pixInFeeCents: '0', qrCodeOutFeeCents: '0' });
    await adminOk(platform.env, 'fees:set', '--tenant', t, '--tev-out-cents', '100', '--pix-out-cents', '200');
    const set = await adminOk(platform.env, 'fees:set', '--tenant', t, '--account', h.account.id, '--tev-out-cents', '5');
    expect(set).toMatchObject({ tevOutFeeCents: '5', pixOutFeeCents: '200' });
    expect((await fees()).body).toMatchObject({ tevOutFeeCents: '5', pixOutFeeCents: '200', tevInFeeCents: '0' });
    expect((await http('GET', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/fees`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(403);
  });
});
