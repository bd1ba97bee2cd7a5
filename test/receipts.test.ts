import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { extractText, getDocumentProxy } from 'unpdf';
import { buildBrCode } from '../src/pix/brcode.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { CLIENT_ADDRESS, http } from './support/http.ts';
import { expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
/** alice (a person) pays; bob (a company) receives; eve is another holder of the tenant; mallory is of another tenant. */
let alice: Onboarded;
let bob: Onboarded;
let eve: Onboarded;
let mallory: Onboarded;
const BRAND = 'Banco Azul';
/** A 1×1 PNG: the brand's logo. */
const LOGO = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '300' });
  tenantId = await newTenant(platform, { name: 'Tenant 42' });
  const logo = join(tmpdir(), `logo-${randomUUID()}.png`);
  writeFileSync(logo, LOGO);
  expect(await adminOk(platform.env, 'tenant:set-brand', '--tenant', tenantId, '--name', BRAND, '--logo', logo)).toEqual({ tenantId, brandName: BRAND, logo: 'image/png' });
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--tev-out-cents', '150', '--tev-in-cents', '50', '--pix-out-cents', '100', '--qr-out-cents', '70', '--pix-in-cents', '20');
  [alice, bob, eve] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId, 'COMPANY'), onboarded(platform, tenantId)]);
  mallory = await onboarded(platform, await newTenant(platform));
  await fund(platform, tenantId, alice.account.id, 100_000);
}, 120_000);
afterAll(async () => {
  if (tenantId) await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const headersOf = (who: Onboarded, accept = 'application/json') => ({ ...tenantHeaders(who.tenantId, who.token), accept });
const payoutReceipt = (who: Onboarded, payoutId: string, accountId = who.account.id) =>
  http('GET', `${platform.holderUrl}/accounts/${accountId}/payouts/${payoutId}/receipt`, { headers: headersOf(who) });
const transactionReceipt = (who: Onboarded, transactionId: string, accountId = who.account.id) =>
  http('GET', `${platform.holderUrl}/accounts/${accountId}/transactions/${transactionId}/receipt`, { headers: headersOf(who) });
const verify = (code: string) => http('GET', `${platform.holderUrl}/receipts/${encodeURIComponent(code)}`);

const CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/;
const BRASILIA = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}-03:00$/;
const masked = (cpf: string) => `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`;
const own = (who: Onboarded, name: string, document: string) => ({ name, document, institution: BRAND, ispb: '00000000', branch: who.account.agency, account: who.account.number });

async function tev(from: Onboarded, to: Onboarded, amount: number, description: string): Promise<string> {
  const res = await http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, {
    body: { accountNumber: to.account.number, amount, pin: from.pin, description },
    headers: tenantHeaders(from.tenantId, from.token),
  });
  expect(res.status).toBe(200);
  return res.body.tev.tevId;
}

const payoutStatus = async (who: Onboarded, payoutId: string) =>
  (await http('GET', `${platform.holderUrl}/accounts/${who.account.id}/payouts/${payoutId}`, { headers: tenantHeaders(who.tenantId, who.token) })).body.status;
const settled = (who: Onboarded, payoutId: string, status: string) =>
  waitFor(async () => ((await payoutStatus(who, payoutId)) === status ? true : undefined), 30_000, `payout ${status}`);

async function payKey(amount: number, description?: string): Promise<string> {
  const res = await http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: alice.account.id, pin: alice.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount, ...(description ? { description } : {}) },
    headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': randomUUID() },
  });
  expect(res.status).toBe(201);
  return res.body.payout.payoutId;
}

async function scan(qrCode: string): Promise<string> {
  const res = await http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
    body: { accountId: alice.account.id, pin: alice.pin, qrCode },
    headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': randomUUID() },
  });
  expect(res.status).toBe(201);
  return res.body.payout.payoutId;
}

const statementIdOf = async (accountId: string, operationId: string, source: string) =>
  (await sql('select statement_id from movement where account_id = $1 and operation_id = $2 and source = $3', [accountId, operationId, source]))[0].statement_id as string;

async function pdfText(who: Onboarded, url: string): Promise<string> {
  const res = await fetch(url, { headers: { ...headersOf(who, 'application/pdf'), 'x-forwarded-for': CLIENT_ADDRESS } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/pdf/);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (process.env.RECEIPT_PDF_DIR) writeFileSync(join(process.env.RECEIPT_PDF_DIR, `${randomUUID()}.pdf`), bytes);
  const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
  return text.replace(/\s+/g, ' ');
}

describe('receipts', () => {
  test('a TEV, on both sides: exact fields, masked CPF, whole CNPJ, a code that verifies, a PDF that reads back', async () => {
    const tevId = await tev(alice, bob, 25.5, 'Aluguel de março');
    const [row] = await sql('select end_to_end_id from tev_transfer where id = $1', [tevId]);
    const sent = await payoutReceipt(alice, tevId);
    expect(sent.status).toBe(200);
    const receiver = { name: 'Padaria Pão Quente LTDA', document: bob.document, institution: BRAND, ispb: '00000000', branch: bob.account.agency, account: bob.account.number };
    expect(sent.body).toEqual({
      kind: 'TEV_SENT',
      status: 'COMPLETED',
      issuer: BRAND,
      amount: 25.5,
      fee: 1.5,
      returnedAmount: null,
      dateTime: expect.stringMatching(BRASILIA),
      payer: own(alice, 'Maria da Silva', masked(alice.document)),
      receiver,
      description: 'Aluguel de março',
      endToEndId: row.end_to_end_id,
      transactionId: await statementIdOf(alice.account.id, tevId, 'TEF_OUT'),
      payoutId: tevId,
      authenticationCode: expect.stringMatching(CODE),
    });
    // The same receipt by its statement transaction id, the same code.
    expect((await transactionReceipt(alice, sent.body.transactionId)).body).toEqual(sent.body);

    const creditId = await statementIdOf(bob.account.id, tevId, 'TEF_IN');
    const received = await transactionReceipt(bob, creditId);
    expect(received.body).toEqual({
      ...sent.body,
      kind: 'TEV_RECEIVED',
      fee: 0.5,
      payer: { name: 'Maria da Silva', document: masked(alice.document), institution: BRAND, ispb: '00000000', branch: alice.account.agency, account: alice.account.number },
      receiver: own(bob, 'Padaria Pão Quente LTDA', bob.document),
      transactionId: creditId,
      payoutId: null,
      authenticationCode: expect.stringMatching(CODE),
    });
    expect(received.body.authenticationCode).not.toBe(sent.body.authenticationCode);

    // Verification: genuine with exactly the receipt's fields, in any case and without dashes; a changed code is not.
    expect((await verify(sent.body.authenticationCode)).body).toEqual({ genuine: true, receipt: sent.body });
    expect((await verify(sent.body.authenticationCode.toLowerCase().replace(/-/g, ''))).body).toEqual({ genuine: true, receipt: sent.body });
    const other = sent.body.authenticationCode.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect((await verify(other)).body).toEqual({ genuine: false });
    expect((await verify('not-a-code-at-all!')).status).toBe(400);

    const text = await pdfText(alice, `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${tevId}/receipt`);
    for (const shown of [BRAND, 'Comprovante de transferência enviada', 'R$ 25,50', 'R$ 1,50', 'Maria da Silva', masked(alice.document), 'Padaria Pão Quente LTDA', 'Aluguel de março', row.end_to_end_id, sent.body.authenticationCode, 'horário de Brasília']) {
      expect(text).toContain(shown);
    }
    expect(text).toContain(bob.document.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, '$1.$2.$3/$4-$5'));
    expect(text).not.toContain(alice.document);
  });

  test('a changed field no longer verifies', async () => {
    const tevId = await tev(alice, bob, 3, 'Café');
    const { body } = await payoutReceipt(alice, tevId);
    await sql(`update receipt set fields = jsonb_set(fields, '{amount}', '30') where code = $1`, [body.authenticationCode]);
    expect((await verify(body.authenticationCode)).body).toEqual({ genuine: false });
  });

  test('a Pix by key; the incoming Pix that funded the account', async () => {
    const payoutId = await payKey(12.34, 'Conta de luz');
    expect((await payoutReceipt(alice, payoutId)).status).toBe(409);
    await settled(alice, payoutId, 'POSTED');
    const { body } = await payoutReceipt(alice, payoutId);
    expect(body).toMatchObject({
      kind: 'PIX_SENT',
      status: 'COMPLETED',
      amount: 12.34,
      fee: 1,
      payer: own(alice, 'Maria da Silva', masked(alice.document)),
      receiver: { ispb: '99999999', institution: 'Banco Sandbox S.A.', document: expect.stringMatching(/^\*\*\*\.\d{3}\.\d{3}-\*\*$/) },
      description: 'Conta de luz',
      endToEndId: expect.stringMatching(/^E\d{8}/),
      payoutId,
    });
    const [funding] = await sql(`select statement_id, metadata from movement where account_id = $1 and source = 'PIX_IN' order by created_at limit 1`, [alice.account.id]);
    const incoming = await transactionReceipt(alice, funding.statement_id);
    expect(incoming.body).toMatchObject({
      kind: 'PIX_RECEIVED',
      status: 'COMPLETED',
      amount: 1000,
      fee: 0.2,
      payer: { name: 'Pagador Sandbox', document: masked(funding.metadata.payer.document), ispb: '99999999', institution: 'Banco Sandbox S.A.' },
      receiver: own(alice, 'Maria da Silva', masked(alice.document)),
      payoutId: null,
    });
  });

  test('a static QR Code, and a dynamic one: a charge of bob paid, with bob\'s receipt of the paid charge', async () => {
    const staticId = await scan(buildBrCode({ pixKey: 'loja@example.com', merchantName: 'Padaria', merchantCity: 'Natal', amountCents: 1500n, txid: 'PEDIDO7' }));
    await settled(alice, staticId, 'POSTED');
    expect((await payoutReceipt(alice, staticId)).body).toMatchObject({ kind: 'PIX_STATIC_QR_SENT', amount: 15, fee: 0.7 });

    const pix = await pixAccountIdOf(platform, tenantId, bob.document);
    const key = await apiKey(platform, tenantId, pix);
    const charge = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${pix}/charges`, {
      body: { amountCents: 4200, expiresInSeconds: 3600 },
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
    });
    expect(charge.status).toBe(201);
    const dynamicId = await scan(charge.body.brCode);
    await settled(alice, dynamicId, 'POSTED');
    const paid = await payoutReceipt(alice, dynamicId);
    expect(paid.body).toMatchObject({ kind: 'PIX_DYNAMIC_QR_SENT', amount: 42, fee: 0.7, receiver: { name: 'Padaria Pão Quente LTDA', ispb: '00000000' } });

    const [credit] = await sql(`select statement_id from movement where account_id = $1 and source = 'PIX_IN' and metadata->>'chargeId' = $2`, [bob.account.id, charge.body.chargeId]);
    const received = await transactionReceipt(bob, credit.statement_id);
    expect(received.body).toMatchObject({
      kind: 'PIX_CHARGE_RECEIVED',
      status: 'COMPLETED',
      amount: 42,
      fee: 0.2,
      endToEndId: paid.body.endToEndId,
      receiver: own(bob, 'Padaria Pão Quente LTDA', bob.document),
    });
    expect((await verify(received.body.authenticationCode)).body.genuine).toBe(true);
  });

  test('a returned payout says so; its PDF too', async () => {
    const payoutId = await payKey(10.93);
    await settled(alice, payoutId, 'REFUNDED');
    const { body } = await payoutReceipt(alice, payoutId);
    expect(body).toMatchObject({ kind: 'PIX_SENT', status: 'RETURNED', amount: 10.93, returnedAmount: 10.93 });
    const text = await pdfText(alice, `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${payoutId}/receipt`);
    expect(text).toContain('DEVOLVIDO');
    expect(text).toContain('R$ 10,93');
  });

  test('a failed payout has none: 409 with its state', async () => {
    const payoutId = await payKey(5.91);
    await settled(alice, payoutId, 'FAILED');
    const res = await payoutReceipt(alice, payoutId);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 'RECEIPT_NOT_AVAILABLE', message: 'A receipt exists only for a final, successful movement; this one is FAILED' });
  });

  test("another holder's or tenant's payout and transaction: 404; bad input: 4xx", async () => {
    const tevId = await tev(alice, bob, 1, 'Teste');
    const transactionId = await statementIdOf(alice.account.id, tevId, 'TEF_OUT');
    // bob received it: the payout is alice's alone.
    expect((await payoutReceipt(bob, tevId)).status).toBe(404);
    for (const who of [eve, mallory]) {
      expect((await payoutReceipt(who, tevId, alice.account.id)).status).toBe(404);
      expect((await transactionReceipt(who, transactionId, alice.account.id)).status).toBe(404);
      expect((await payoutReceipt(who, tevId)).status).toBe(404);
      expect((await transactionReceipt(who, transactionId)).status).toBe(404);
    }
    expect((await payoutReceipt(alice, 'not-a-cuid')).status).toBe(400);
    expect((await transactionReceipt(alice, 'not-a-uuid')).status).toBe(400);
    const csv = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${tevId}/receipt`, { headers: headersOf(alice, 'text/csv') });
    expect(csv.status).toBe(406);
    expect(csv.body.code).toBe('NOT_ACCEPTABLE');
  });
});
