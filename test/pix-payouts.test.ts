import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { buildBrCode } from '../src/pix/brcode.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { coreAccountIdOf, fund, newCnpj, newCpf, newTenant, onboarded, registeredWithAccount, shownToPixPayer, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '400' });
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-out-cents', '100', '--qr-out-cents', '50');
  alice = await onboarded(platform, tenantId);
  await fund(platform, tenantId, alice.account.id, 1_000_000);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const payKey = (body: Record<string, unknown>, key = randomUUID(), who = alice) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: who.account.id, pin: who.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', ...body },
    headers: { ...tenantHeaders(who.tenantId, who.token), 'idempotency-key': key },
  });
const payQr = (body: Record<string, unknown>) =>
  http('POST', `${platform.holderUrl}/pix/qrcode/payment`, { body: { accountId: alice.account.id, pin: alice.pin, ...body }, headers: tenantHeaders(tenantId, alice.token) });
const payout = (id: string) => http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${id}`, { headers: tenantHeaders(tenantId, alice.token) });
const settled = (id: string, status: string) => waitFor(async () => ((await payout(id)).body.status === status ? (await payout(id)).body : undefined), 40_000, `payout ${status}`);
const eventsOf = (payoutId: string) => sql(`select type, data from event_outbox where data->>'payoutId' = $1 order by created_at`, [payoutId]);

describe('Pix payout by key', () => {
  test('POSTED: debited at once (PROCESSING, no endToEndId), then settled with endToEndId, paymentDate and the event', async () => {
    const before = await balanceOf(alice.account.id);
    const res = await payKey({ amount: 10 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      payout: { payoutId: expect.any(String), status: 'PROCESSING', amountCents: '1000', feeCents: '100', createdAt: expect.stringMatching(/Z$/), trustedContact: false },
    });
    const id = res.body.payout.payoutId;
    expect(await balanceOf(alice.account.id)).toBe(before - 1100n);
    const processing = (await payout(id)).body;
    if (processing.status === 'PROCESSING') {
      expect(processing.metadata.endToEndId).toBeNull();
      expect(processing.metadata.paymentDate).toBeUndefined();
    }
    const posted = await settled(id, 'POSTED');
    expect(posted).toMatchObject({ type: 'DEBIT', source: 'PIX_OUT', feeAmount: '100', reversesMovementId: null });
    expect(posted.metadata).toMatchObject({
      endToEndId: expect.stringMatching(/^E\d{8}\d{12}[A-Za-z0-9]{11}$/),
      paymentDate: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d-03:00$/),
      pixAccountId: expect.any(String),
      payer: { branch: alice.account.agency, account: alice.account.number },
      beneficiary: expect.objectContaining({ pixKey: 'loja@example.com', pixKeyType: 'EMAIL', institution: 'Banco Sandbox S.A.', ispb: '99999999' }),
    });
    expect(posted.entries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', '-1000'], ['FEE', '-100']]);
    const [event] = await eventsOf(id);
    expect(event.type).toBe('pix.payout.succeeded');
    expect(Object.keys(event.data).sort()).toEqual(
      ['payoutId', 'endToEndId', 'movementId', 'occurredAt', 'amountCents', 'payerBranch', 'payerAccount', 'beneficiaryName', 'beneficiaryBranch', 'beneficiaryPixKey', 'beneficiaryAccount', 'beneficiaryDocument', 'beneficiaryPixKeyType', 'beneficiaryAccountType', 'beneficiaryInstitution'].sort(),
    );
    expect(event.data).toMatchObject({ payoutId: id, movementId: posted.id, endToEndId: posted.metadata.endToEndId, amountCents: '1000', beneficiaryPixKey: 'loja@example.com' });
    const statement = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions?startDate=2020-01-01&endDate=2100-01-01&limit=5`, { headers: tenantHeaders(tenantId, alice.token) });
    const tx = statement.body.transactions.find((t: any) => t.endToEndId === posted.metadata.endToEndId);
    expect(tx).toMatchObject({ type: 'PIX', credit: false, amount: 10, status: 'DONE' });
    expect(tx.statementMetadata.beneficiary).toMatchObject({ pixKey: 'loja@example.com', pixKeyType: 'EMAIL', institution: 'Banco Sandbox S.A.' });
  });

  test("the receiver's CPF reads masked, as Pix shows it to the payer, in the payout, statement and event; a CNPJ stays whole; entries name the internal account id", async () => {
    const aliceCore = await coreAccountIdOf(platform, tenantId, alice.document);
    const [cpf, cnpj] = [newCpf(), newCnpj()];
    const toCpf = (await payKey({ amount: 3, pixKey: cpf, pixKeyType: 'CPF' })).body.payout.payoutId;
    const masked = `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`;
    expect(masked).toBe(shownToPixPayer(cpf));
    expect((await payout(toCpf)).body.metadata.beneficiary.document).toBe(masked);
    const posted = await settled(toCpf, 'POSTED');
    // The key is what the payer typed; the document is the directory's answer, masked.
    expect(posted.metadata.beneficiary).toMatchObject({ document: masked, pixKey: cpf, pixKeyType: 'CPF' });
    expect(posted.entries).toEqual([expect.objectContaining({ kind: 'PRIMARY', accountId: aliceCore }), expect.objectContaining({ kind: 'FEE', accountId: aliceCore })]);
    expect((await eventsOf(toCpf))[0].data.beneficiaryDocument).toBe(masked);
    const statement = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions?startDate=2020-01-01&endDate=2100-01-01&limit=5`, { headers: tenantHeaders(tenantId, alice.token) });
    expect(statement.body.transactions.find((t: any) => t.endToEndId === posted.metadata.endToEndId).statementMetadata.beneficiary.document).toBe(masked);
    expect(JSON.stringify(await sql('select beneficiary from pix_payout where id = $1', [toCpf]))).not.toContain(cpf);

    const toCnpj = (await payKey({ amount: 3, pixKey: cnpj, pixKeyType: 'CNPJ' })).body.payout.payoutId;
    expect((await settled(toCnpj, 'POSTED')).metadata.beneficiary.document).toBe(cnpj);
    expect((await eventsOf(toCnpj))[0].data.beneficiaryDocument).toBe(cnpj);
  });

  test.each([
    ['FAILED', 10.91, 'pix.payout.failed'],
    ['CANCELLED', 10.92, 'pix.payout.cancelled'],
  ])('%s: amount and fee return as REVERSAL entries, with the event', async (status, amount, eventType) => {
    const before = await balanceOf(alice.account.id);
    const res = await payKey({ amount });
    const id = res.body.payout.payoutId;
    const done = await settled(id, status);
    expect(await balanceOf(alice.account.id)).toBe(before);
    expect(done.entries.map((e: any) => e.kind)).toEqual(['PRIMARY', 'FEE', 'REVERSAL', 'REVERSAL']);
    expect(done.entries.reduce((s: bigint, e: any) => s + BigInt(e.amount), 0n)).toBe(0n);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual([eventType]);
    expect(events[0]!.data).toMatchObject({ payoutId: id, amountCents: String(Math.round(amount * 100)), reason: expect.any(String), occurredAt: expect.any(String) });
  });

  test.each([
    ['total', 10.93, 1093n],
    ['partial', 10.94, 547n],
  ])('REFUNDED (%s): posted, then the returned amount is credited', async (_kind, amount, refunded) => {
    const before = await balanceOf(alice.account.id);
    const id = (await payKey({ amount })).body.payout.payoutId;
    const done = await settled(id, 'REFUNDED');
    const cents = BigInt(Math.round(amount * 100));
    expect(await balanceOf(alice.account.id)).toBe(before - cents - 100n + refunded);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['pix.payout.succeeded', 'pix.payout.refunded']);
    expect(events[1]!.data).toMatchObject({ payoutId: id, amountCents: cents.toString(), refundAmountCents: refunded.toString(), refundEndToEndId: expect.stringMatching(/^D99999999/) });
    expect(done.entries.at(-1)).toMatchObject({ kind: 'REVERSAL', amount: refunded.toString() });
  });

  test('the same Idempotency-Key returns the same payout and debits once; another body is 409', async () => {
    const key = randomUUID();
    const before = await balanceOf(alice.account.id);
    const [a, b] = await Promise.all([payKey({ amount: 1 }, key), payKey({ amount: 1 }, key)]);
    expect(b.body.payout?.payoutId ?? a.body.payout.payoutId).toBe(a.body.payout.payoutId);
    expect(await balanceOf(alice.account.id)).toBe(before - 200n);
    expect((await payKey({ amount: 2 }, key)).status).toBe(409);
  });

  test.each([
    ['a CPF with a bad check digit', { pixKey: '52998224724', pixKeyType: 'CPF' }],
    ['a CNPJ with letters', { pixKey: '1122233300018A', pixKeyType: 'CNPJ' }],
    ['an e-mail without @', { pixKey: 'loja.example.com', pixKeyType: 'EMAIL' }],
    ['a phone without +', { pixKey: '11987654321', pixKeyType: 'PHONE' }],
    ['an EVP that is not a UUID', { pixKey: 'abc', pixKeyType: 'EVP' }],
    ['an unknown key type', { pixKey: 'x', pixKeyType: 'IBAN' }],
    ['3 decimal places', { amount: 1.001 }],
    ['a zero amount', { amount: 0 }],
  ])('%s: 400 and nothing moves', async (_c, body) => {
    const before = await balanceOf(alice.account.id);
    const res = await payKey({ amount: 1, ...body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(await balanceOf(alice.account.id)).toBe(before);
  });

  test('every valid key type is accepted', async () => {
    for (const [pixKey, pixKeyType] of [['52998224725', 'CPF'], ['11222333000181', 'CNPJ'], ['+5511987654321', 'PHONE'], [randomUUID(), 'EVP']]) {
      expect((await payKey({ amount: 0.5, pixKey, pixKeyType })).status).toBe(201);
    }
  });

  test('a wrong PIN is 403, an unfunded account 422, a holder before KYC 403: nothing moves', async () => {
    const before = await balanceOf(alice.account.id);
    expect((await payKey({ amount: 1, pin: '9517' })).body.code).toBe('INVALID_PIN');
    await sql('update holder set pin_failed_attempts = 0 where id = $1', [alice.holder.id]);
    expect(await balanceOf(alice.account.id)).toBe(before);
    const poor = await onboarded(platform, tenantId);
    const broke = await payKey({ amount: 1 }, randomUUID(), poor);
    expect(broke.status).toBe(422);
    expect(broke.body.code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(poor.account.id)).toBe(0n);
    const fresh = await registeredWithAccount(platform, tenantId);
    const res = await http('POST', `${platform.holderUrl}/pix/payment`, { body: { accountId: fresh.accountId, pin: '2580', pixKey: 'a@b.co', pixKeyType: 'EMAIL', amount: 1 }, headers: tenantHeaders(tenantId, fresh.token) });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ONBOARDING_INCOMPLETE');
  });

  test('a worker restart while the payout waits for settlement loses nothing', async () => {
    const res = await payKey({ amount: 3 });
    expect(res.status).toBe(201);
    await platform.stopWorker();
    await new Promise((r) => setTimeout(r, 800));
    await platform.startWorker();
    const posted = await settled(res.body.payout.payoutId, 'POSTED');
    expect(posted.metadata.endToEndId).toEqual(expect.any(String));
  }, 90_000);
});

describe('Pix by QR Code', () => {
  const code = (amountCents?: bigint) => buildBrCode({ pixKey: 'loja@example.com', merchantName: 'Padaria Pão Quente', merchantCity: 'São Paulo', amountCents: amountCents ?? null, txid: 'PEDIDO123' });

  test('a static code with its amount is paid as QR_CODE_OUT with the QR fee', async () => {
    const before = await balanceOf(alice.account.id);
    const res = await payQr({ qrCode: code(1234n) });
    expect(res.status).toBe(201);
    expect(res.body.payout).toMatchObject({ amountCents: '1234', feeCents: '50' });
    expect(await balanceOf(alice.account.id)).toBe(before - 1284n);
    const posted = await settled(res.body.payout.payoutId, 'POSTED');
    expect(posted.source).toBe('QR_CODE_OUT');
  });

  test('a code without amount takes the amount of the request; one with an amount refuses another', async () => {
    expect((await payQr({ qrCode: code(), amount: 2.5 })).body.payout.amountCents).toBe('250');
    expect((await payQr({ qrCode: code() })).status).toBe(400);
    const mismatch = await payQr({ qrCode: code(1000n), amount: 9 });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.details[0].path).toBe('body.amount');
  });

  test('a corrupted code is 400 naming the problem; a dynamic code whose location cannot be read is 422', async () => {
    const good = code(1000n);
    const badCrc = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    const res = await payQr({ qrCode: badCrc });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/CRC16 mismatch/);
    expect((await payQr({ qrCode: 'not a code' })).status).toBe(400);
    // `.invalid` never resolves (RFC 2606): the payload cannot be fetched, so nothing can be paid.
    const before = await balanceOf(alice.account.id);
    const dynamic = buildBrCode({ url: 'pix.invalid/qr/v2/9d36b84f-c70b-478f-b95c-12729b90ca25', merchantName: 'Loja', merchantCity: 'Rio' });
    const dyn = await payQr({ qrCode: dynamic, amount: 1 });
    expect(dyn.status).toBe(422);
    expect(dyn.body.code).toBe('QR_LOCATION_UNAVAILABLE');
    expect(await balanceOf(alice.account.id)).toBe(before);
  });
});
