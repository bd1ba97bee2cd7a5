import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { buildBrCode } from '../src/pix/brcode.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newCpf, newTenant, onboarded, pixAccountIdOf, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

/**
 * Every Pix fee, set for the tenant and overridden for one account field by field: the send fee by key, the QR Code
 * send fee and the receive fee (incoming Pix and a charge paid), on both sides of the money. (TEV fees:
 * tev-money-rules.test.ts.)
 */

let platform: Platform;
let tenantId: string;
let own: Onboarded;
let plain: Onboarded;
const TENANT = { pixOut: 100n, qrOut: 50n, pixIn: 10n };
const OWN = { pixOut: 7n, qrOut: 0n, pixIn: 25n };

beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  [own, plain] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-out-cents', '100', '--qr-out-cents', '50', '--pix-in-cents', '10');
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--account', own.account.id, '--pix-out-cents', '7', '--qr-out-cents', '0', '--pix-in-cents', '25');
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const revenue = async () => BigInt((await sql(`select balance_cents from account where tenant_id = $1 and kind = 'FEE_REVENUE'`, [tenantId]))[0].balance_cents);
const payKey = (who: Onboarded) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: who.account.id, pin: who.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount: 1 },
    headers: { ...tenantHeaders(tenantId, who.token), 'idempotency-key': randomUUID() },
  });
const payQr = (who: Onboarded) =>
  http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
    body: { accountId: who.account.id, pin: who.pin, qrCode: buildBrCode({ pixKey: 'loja@example.com', merchantName: 'Loja', merchantCity: 'Recife', amountCents: 100n, txid: 'FEES1' }) },
    headers: { ...tenantHeaders(tenantId, who.token), 'idempotency-key': randomUUID() },
  });

test("an account's own Pix fees override its tenant's field by field, on the sending and the receiving side", async () => {
  // Receiving: the incoming Pix pays the receive fee of the account that gets it.
  await fund(platform, tenantId, own.account.id, 10_000);
  await fund(platform, tenantId, plain.account.id, 10_000);
  expect(await balanceOf(own.account.id)).toBe(10_000n - OWN.pixIn);
  expect(await balanceOf(plain.account.id)).toBe(10_000n - TENANT.pixIn);
  let fees = OWN.pixIn + TENANT.pixIn;
  expect(await revenue()).toBe(fees);

  // Sending by key and by a static QR Code.
  for (const [who, byKey, byQr] of [[own, OWN.pixOut, OWN.qrOut], [plain, TENANT.pixOut, TENANT.qrOut]] as const) {
    const before = await balanceOf(who.account.id);
    const key = await payKey(who);
    expect(key.status).toBe(201);
    expect(key.body.payout).toMatchObject({ status: 'PROCESSING', amountCents: '100', feeCents: byKey.toString() });
    const qr = await payQr(who);
    expect(qr.status).toBe(201);
    expect(qr.body.payout).toMatchObject({ status: 'PROCESSING', amountCents: '100', feeCents: byQr.toString() });
    expect(await balanceOf(who.account.id)).toBe(before - 200n - byKey - byQr);
    fees += byKey + byQr;
  }
  expect(await revenue()).toBe(fees);

  // A charge paid to the account: its own receive fee.
  const ownPix = await pixAccountIdOf(platform, tenantId, own.document);
  const key = await apiKey(platform, tenantId, ownPix);
  const charge = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${ownPix}/charges`, {
    body: { amountCents: '2500' },
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
  });
  expect(charge.status).toBe(201);
  const before = await balanceOf(own.account.id);
  const paid = await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${charge.body.txid}/pay`, { body: { payerName: 'Joana Pagadora', payerDocument: newCpf() }, headers: tenantHeaders(tenantId) });
  expect(paid.status).toBe(201);
  expect(await balanceOf(own.account.id)).toBe(before + 2500n - OWN.pixIn);
  expect(await revenue()).toBe(fees + OWN.pixIn);
});

test("an incoming Pix not above the receiving account's own fee is refused, while the tenant's lower fee would take it", async () => {
  const [ownBefore, plainBefore, revenueBefore] = [await balanceOf(own.account.id), await balanceOf(plain.account.id), await revenue()];
  const incoming = (accountId: string) =>
    http('POST', `${platform.holderUrl}/sandbox/pix/incoming`, {
      body: { accountId, amountCents: '20', payerName: 'Pagador', payerDocument: newCpf() },
      headers: tenantHeaders(tenantId),
    });
  const refused = await incoming(own.account.id);
  expect([refused.status, refused.body.code]).toEqual([422, 'AMOUNT_BELOW_RECEIVE_FEE']);
  expect((await incoming(plain.account.id)).status).toBe(201);
  expect(await balanceOf(own.account.id)).toBe(ownBefore);
  expect(await balanceOf(plain.account.id)).toBe(plainBefore + 20n - TENANT.pixIn);
  expect(await revenue()).toBe(revenueBefore + TENANT.pixIn);
});
