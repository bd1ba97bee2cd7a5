import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { parseBrCode } from '../src/pix/brcode.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newCpf, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let alicePix: string;
let bobPix: string;
let aliceKey: string;
/** Reaches both accounts: to prove a charge is only found under its own account. */
let bothKey: string;
let connection: Connection;
let temporal: Client;

const PIX_IN_FEE = 10n;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CUID = /^[a-z][a-z0-9]{23}$/;
const E2E = /^E\d{8}\d{12}[A-Za-z0-9]{11}$/;
const REFUND_E2E = /^D\d{8}\d{12}[A-Za-z0-9]{11}$/;
const ALL_TIME = 'startDate=2000-01-01&endDate=2999-12-31&limit=100';

beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '400' });
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-in-cents', String(PIX_IN_FEE));
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  [alicePix, bobPix] = [await pixAccountIdOf(platform, tenantId, alice.document), await pixAccountIdOf(platform, tenantId, bob.document)];
  [aliceKey, bothKey] = [await apiKey(platform, tenantId, alicePix), await apiKey(platform, tenantId, alicePix, bobPix)];
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
}, 90_000);
afterAll(async () => {
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

const charges = (pix: string) => `${platform.apiUrl}/v1/pix-accounts/${pix}/charges`;
const create = (body: Record<string, unknown>, { key = aliceKey, pix = alicePix, idempotencyKey = randomUUID() as string | null } = {}) =>
  http('POST', charges(pix), { body, headers: { authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) } });
const read = (chargeId: string, { key = aliceKey, pix = alicePix } = {}) => http('GET', `${charges(pix)}/${chargeId}`, { headers: { authorization: `Bearer ${key}` } });
const list = (query = '', { key = aliceKey, pix = alicePix } = {}) => http('GET', `${charges(pix)}${query}`, { headers: { authorization: `Bearer ${key}` } });
const refund = (chargeId: string, amountCents: unknown, { key = aliceKey, pix = alicePix, idempotencyKey = randomUUID() as string | null } = {}) =>
  http('POST', `${charges(pix)}/${chargeId}/refunds`, {
    body: { amountCents },
    headers: { authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
  });
const pay = (txid: string, body: Record<string, unknown> = {}, tenant = tenantId) =>
  http('POST', `${platform.holderUrl}/sandbox/pix/charges/${txid}/pay`, { body: { payerName: 'Joana Pagadora', payerDocument: newCpf(), ...body }, headers: tenantHeaders(tenant) });

async function createOk(body: Record<string, unknown>, options: Parameters<typeof create>[1] = {}) {
  const res = await create(body, options);
  expect(res.status).toBe(201);
  return res.body;
}
async function paidCharge(amountCents: number, options: Parameters<typeof create>[1] = {}) {
  const charge = await createOk({ amountCents }, options);
  const paid = await pay(charge.txid);
  expect(paid.status).toBe(201);
  return { charge, paid: paid.body };
}
const eventsOf = (type: string, chargeId: string) => sql(`select pix_account_id, account_id, data from event_outbox where type = $1 and data->>'chargeId' = $2 order by created_at`, [type, chargeId]);

describe('creation', () => {
  test('answers an ACTIVE charge whose BR Code parses back to its txid and amount', async () => {
    const before = Date.now();
    const res = await create({ amountCents: '2500', tag: 'pedido-42' });
    expect(res.status).toBe(201);
    const c = res.body;
    expect(c).toEqual({
      chargeId: expect.stringMatching(CUID),
      txid: expect.stringMatching(/^[A-Za-z0-9]{26,35}$/),
      brCode: expect.any(String),
      amountCents: '2500',
      tag: 'pedido-42',
      status: 'ACTIVE',
      expiresAt: expect.stringMatching(ISO_UTC),
      createdAt: expect.stringMatching(ISO_UTC),
      paidAt: null,
      paidCents: '0',
      refundedCents: '0',
    });
    // Default expiry: 24 hours after creation.
    expect(Date.parse(c.expiresAt) - Date.parse(c.createdAt)).toBe(86_400_000);
    expect(Math.abs(Date.parse(c.createdAt) - before)).toBeLessThan(10_000);

    const code = parseBrCode(c.brCode);
    expect(code).toMatchObject({ amountCents: 2500n, merchantName: 'MARIA DA SILVA', merchantCity: 'SAO PAULO', initiationMethod: 'dynamic', singleUse: true, pixKey: null });
    // A charge's txid (26–35 characters) cannot sit in a static code's field 62-05: it ends the dynamic code's location.
    expect(code.url).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+/pix/cob/${c.txid}$`));

    expect((await read(c.chargeId)).body).toEqual(c);
    const [row] = await sql('select tenant_id, account_id, pix_account_id, br_code from pix_charge where id = $1', [c.chargeId]);
    expect(row).toEqual({ tenant_id: tenantId, account_id: alice.account.id, pix_account_id: alicePix, br_code: c.brCode });
  });

  test('the same Idempotency-Key and body return the original charge; another body is 409', async () => {
    const idempotencyKey = randomUUID();
    const a = await create({ amountCents: 700, tag: 'idem' }, { idempotencyKey });
    const b = await create({ amountCents: '700', tag: 'idem' }, { idempotencyKey });
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    const c = await create({ amountCents: 701, tag: 'idem' }, { idempotencyKey });
    expect(c.status).toBe(409);
    expect(c.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await sql('select count(*)::int as n from pix_charge where idempotency_key = $1', [idempotencyKey]))[0].n).toBe(1);
  });

  test.each([
    ['amountCents 0', { amountCents: 0 }],
    ['a negative amountCents', { amountCents: -5 }],
    ['a decimal amountCents', { amountCents: 10.5 }],
    ['a decimal amountCents text', { amountCents: '10.50' }],
    ['a non-numeric amountCents', { amountCents: 'ten' }],
    ['no amountCents', {}],
    ['a tag of 65 characters', { amountCents: 100, tag: 'x'.repeat(65) }],
    ['a blank tag', { amountCents: 100, tag: '  ' }],
    ['expiresInSeconds 0', { amountCents: 100, expiresInSeconds: 0 }],
    ['expiresInSeconds above 30 days', { amountCents: 100, expiresInSeconds: 2_592_001 }],
    ['a fractional expiresInSeconds', { amountCents: 100, expiresInSeconds: 1.5 }],
  ])('%s is 400 VALIDATION_ERROR, nothing stored', async (_case, body) => {
    const idempotencyKey = randomUUID();
    const res = await create(body, { idempotencyKey });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details[0].path).toMatch(/^body\./);
    expect((await sql('select count(*)::int as n from pix_charge where idempotency_key = $1', [idempotencyKey]))[0].n).toBe(0);
  });

  test('a tag of 64 characters and the longest expiry are accepted', async () => {
    const c = await createOk({ amountCents: 100, tag: 't'.repeat(64), expiresInSeconds: 2_592_000 });
    expect(c.tag).toBe('t'.repeat(64));
    expect(Date.parse(c.expiresAt) - Date.parse(c.createdAt)).toBe(2_592_000_000);
  });

  test('a missing or malformed Idempotency-Key is 400; no key is 401; an account outside the key is 403', async () => {
    expect((await create({ amountCents: 100 }, { idempotencyKey: null })).status).toBe(400);
    const bad = await create({ amountCents: 100 }, { idempotencyKey: 'not a key!' });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('headers.idempotency-key');
    expect((await http('POST', charges(alicePix), { body: { amountCents: 100 }, headers: { 'idempotency-key': randomUUID() } })).status).toBe(401);
    const other = await create({ amountCents: 100 }, { pix: bobPix });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('ACCOUNT_NOT_IN_KEY_SCOPE');
  });

  test('an amount the receive fee would swallow is 422 AMOUNT_BELOW_RECEIVE_FEE', async () => {
    const res = await create({ amountCents: Number(PIX_IN_FEE) });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('AMOUNT_BELOW_RECEIVE_FEE');
  });
});

describe('reading', () => {
  test('an unknown charge, and a charge of another account, are 404; an account outside the key is 403', async () => {
    expect((await read('nope')).status).toBe(404);
    const bobs = await createOk({ amountCents: 300 }, { key: bothKey, pix: bobPix });
    expect((await read(bobs.chargeId, { key: bothKey, pix: bobPix })).status).toBe(200);
    const elsewhere = await read(bobs.chargeId, { key: bothKey, pix: alicePix });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.code).toBe('NOT_FOUND');
    expect((await read(bobs.chargeId, { key: aliceKey, pix: bobPix })).status).toBe(403);
    expect((await list('', { key: aliceKey, pix: bobPix })).status).toBe(403);
  });

  test('the list is paginated newest first and filters by status', async () => {
    const t = await newTenant(platform);
    const h = await onboarded(platform, t);
    const pix = await pixAccountIdOf(platform, t, h.document);
    const key = await apiKey(platform, t, pix);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createOk({ amountCents: 100 + i }, { key, pix })).chargeId);
    const first = await list('?limit=2', { key, pix });
    expect(first.status).toBe(200);
    expect(first.body.charges.map((c: any) => c.chargeId)).toEqual([ids[2], ids[1]]);
    expect(first.body.pagination).toEqual({ limit: 2, nextCursor: expect.any(String), hasMore: true });
    const second = await list(`?limit=2&cursor=${first.body.pagination.nextCursor}`, { key, pix });
    expect(second.body.charges.map((c: any) => c.chargeId)).toEqual([ids[0]]);
    expect(second.body.pagination).toEqual({ limit: 2, nextCursor: null, hasMore: false });

    const charge = (await read(ids[1]!, { key, pix })).body;
    expect((await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${charge.txid}/pay`, { body: { payerName: 'P', payerDocument: newCpf() }, headers: tenantHeaders(t) })).status).toBe(201);
    expect((await list('?status=PAID', { key, pix })).body.charges.map((c: any) => c.chargeId)).toEqual([ids[1]]);
    expect((await list('?status=ACTIVE', { key, pix })).body.charges.map((c: any) => c.chargeId)).toEqual([ids[2], ids[0]]);

    expect((await list('?limit=0', { key, pix })).status).toBe(400);
    expect((await list('?status=GONE', { key, pix })).status).toBe(400);
    expect((await list('?cursor=garbage', { key, pix })).status).toBe(400);
    // A cursor is only valid for the listing that issued it.
    expect((await list(`?status=ACTIVE&cursor=${first.body.pagination.nextCursor}`, { key, pix })).status).toBe(400);
  });
});

describe('payment', () => {
  test('credits the amount minus the pix-in fee, shows a PIX credit in the statement and writes pix.charge.paid with every field', async () => {
    const charge = await createOk({ amountCents: 2500, tag: 'mesa-7' });
    const before = await balanceOf(alice.account.id);
    const payerDocument = newCpf();
    const res = await pay(charge.txid, { payerName: 'Joana Pagadora', payerDocument });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      chargeId: charge.chargeId,
      txid: charge.txid,
      status: 'PAID',
      movementId: expect.stringMatching(CUID),
      endToEndId: expect.stringMatching(E2E),
      amountCents: '2500',
      feeCents: '10',
      balanceAfterCents: String(before + 2500n - PIX_IN_FEE),
      paidAt: expect.stringMatching(ISO_UTC),
    });
    expect(await balanceOf(alice.account.id)).toBe(before + 2500n - PIX_IN_FEE);

    const read1 = (await read(charge.chargeId)).body;
    expect(read1).toEqual({ ...charge, status: 'PAID', paidAt: res.body.paidAt, paidCents: '2500', refundedCents: '0' });

    const statement = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions?${ALL_TIME}`, { headers: tenantHeaders(tenantId, alice.token) });
    expect(statement.status).toBe(200);
    const tx = statement.body.transactions.find((t: any) => t.endToEndId === res.body.endToEndId);
    expect(tx).toMatchObject({
      amount: 25,
      credit: true,
      type: 'PIX',
      status: 'DONE',
      statusExternal: 'SUCCESS',
      balanceAfterTransaction: Number(before + 2500n - PIX_IN_FEE) / 100,
      statementMetadata: {
        endToEndId: res.body.endToEndId,
        payer: { ispb: '99999999', name: 'Joana Pagadora', document: payerDocument, branch: '0001', account: '9999999', institution: 'Banco Sandbox S.A.' },
        beneficiary: { branch: alice.account.agency, account: alice.account.number },
        txid: charge.txid,
      },
    });
    expect(tx.ledgerEntries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', 25], ['FEE', -0.1]]);

    const events = await eventsOf('pix.charge.paid', charge.chargeId);
    expect(events).toHaveLength(1);
    expect(events[0].pix_account_id).toBe(alicePix);
    expect(events[0].account_id).toBe(alice.account.id);
    expect(events[0].data).toEqual({
      tag: 'mesa-7',
      txid: charge.txid,
      chargeId: charge.chargeId,
      payerName: 'Joana Pagadora',
      endToEndId: res.body.endToEndId,
      movementId: res.body.movementId,
      occurredAt: res.body.paidAt,
      amountCents: '2500',
      paymentDate: res.body.paidAt,
      payerDocument,
      payerInstitution: 'Banco Sandbox S.A.',
      refundEndToEndId: null,
      payerInstitutionIspb: '99999999',
    });
    // Nothing else: a charge payment is announced as pix.charge.paid, not also as pix.in.received.
    expect(await sql(`select id from event_outbox where type = 'pix.in.received' and data->>'movementId' = $1`, [res.body.movementId])).toEqual([]);
    await expectLedgerConsistent(tenantId);
  });

  test("the charge's workflow is found by ChargeId, TenantId and AccountId, and ends PAID as soon as the charge is paid", async () => {
    const charge = await createOk({ amountCents: 350 });
    const found = await waitFor(async () => {
      const runs = [];
      for await (const w of temporal.workflow.list({ query: `ChargeId = "${charge.chargeId}" AND TenantId = "${tenantId}" AND AccountId = "${alice.account.id}"` })) runs.push(w);
      return runs.length ? runs : undefined;
    }, 20_000, 'visibility');
    expect(found.map((w) => [w.workflowId, w.status.name])).toEqual([[`pix-charge-${charge.chargeId}`, 'RUNNING']]);
    expect((await pay(charge.txid)).status).toBe(201);
    // The charge expires in 24 h: only the payment's signal can end the run now.
    expect(await temporal.workflow.getHandle(`pix-charge-${charge.chargeId}`).result()).toBe('PAID');
  });

  test('a paid charge cannot be paid again (409) and does not expire', async () => {
    const charge = await createOk({ amountCents: 400, expiresInSeconds: 2 });
    expect((await pay(charge.txid)).status).toBe(201);
    const again = await pay(charge.txid);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CHARGE_ALREADY_PAID');
    await new Promise((r) => setTimeout(r, 3500));
    expect((await read(charge.chargeId)).body.status).toBe('PAID');
    expect(await eventsOf('pix.charge.expired', charge.chargeId)).toEqual([]);
    expect(await eventsOf('pix.charge.paid', charge.chargeId)).toHaveLength(1);
  });

  test('another amount is 422; an unknown txid is 404 (also from another tenant); a malformed txid or payer is 400', async () => {
    const charge = await createOk({ amountCents: 500 });
    const before = await balanceOf(alice.account.id);
    const mismatch = await pay(charge.txid, { amountCents: 499 });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.code).toBe('CHARGE_AMOUNT_MISMATCH');
    expect((await pay('A'.repeat(32))).status).toBe(404);
    expect((await pay(charge.txid, {}, await newTenant(platform))).status).toBe(404);
    expect((await pay('short')).status).toBe(400);
    expect((await pay(charge.txid, { payerDocument: '123' })).status).toBe(400);
    expect((await pay(charge.txid, { payerName: '' })).status).toBe(400);
    expect((await read(charge.chargeId)).body.status).toBe('ACTIVE');
    expect(await balanceOf(alice.account.id)).toBe(before);
    expect((await pay(charge.txid, { amountCents: '500' })).status).toBe(201);
  });
});

describe('expiry', () => {
  test('an unpaid charge expires at expiresAt with pix.charge.expired; paying it afterwards is 409', async () => {
    const charge = await createOk({ amountCents: 900, tag: 'expira', expiresInSeconds: 2 });
    expect(Date.parse(charge.expiresAt) - Date.parse(charge.createdAt)).toBe(2000);
    const expired = await waitFor(async () => {
      const c = (await read(charge.chargeId)).body;
      return c.status === 'EXPIRED' ? c : undefined;
    }, 20_000, 'the charge to expire');
    expect(expired).toEqual({ ...charge, status: 'EXPIRED' });
    expect(await temporal.workflow.getHandle(`pix-charge-${charge.chargeId}`).result()).toBe('EXPIRED');
    const events = await eventsOf('pix.charge.expired', charge.chargeId);
    expect(events).toHaveLength(1);
    expect(events[0].pix_account_id).toBe(alicePix);
    expect(events[0].data).toEqual({ tag: 'expira', txid: charge.txid, chargeId: charge.chargeId, occurredAt: expect.stringMatching(ISO_UTC), amountCents: '900' });
    expect(Date.parse(events[0].data.occurredAt)).toBeGreaterThanOrEqual(Date.parse(charge.expiresAt));

    const before = await balanceOf(alice.account.id);
    const late = await pay(charge.txid);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('CHARGE_EXPIRED');
    expect(await balanceOf(alice.account.id)).toBe(before);
    const refused = await refund(charge.chargeId, 1);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('CHARGE_NOT_PAID');
  });
});

describe('refunds', () => {
  test('partial, then the rest, then one more cent (422): money goes back each time, with pix.charge.refunded', async () => {
    const { charge, paid } = await paidCharge(10_000);
    const afterPayment = await balanceOf(alice.account.id);

    const first = await refund(charge.chargeId, '3000');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ refundId: expect.stringMatching(CUID), chargeId: charge.chargeId, amountCents: '3000', refundEndToEndId: expect.stringMatching(REFUND_E2E), createdAt: expect.stringMatching(ISO_UTC) });
    expect(await balanceOf(alice.account.id)).toBe(afterPayment - 3000n);
    expect((await read(charge.chargeId)).body).toMatchObject({ status: 'PAID', paidCents: '10000', refundedCents: '3000' });

    const second = await refund(charge.chargeId, 7000);
    expect(second.status).toBe(201);
    expect(second.body.refundEndToEndId).not.toBe(first.body.refundEndToEndId);
    // The receive fee is not returned: the account is back where it was before the payment, minus the fee.
    expect(await balanceOf(alice.account.id)).toBe(afterPayment - 10_000n);
    expect((await read(charge.chargeId)).body).toMatchObject({ status: 'PAID', paidCents: '10000', refundedCents: '10000' });

    const third = await refund(charge.chargeId, 1);
    expect(third.status).toBe(422);
    expect(third.body.code).toBe('REFUND_EXCEEDS_PAID');
    expect(await balanceOf(alice.account.id)).toBe(afterPayment - 10_000n);

    const events = await eventsOf('pix.charge.refunded', charge.chargeId);
    expect(events.map((e: any) => e.data)).toEqual(
      [first.body, second.body].map((r) => ({
        tag: null,
        txid: charge.txid,
        chargeId: charge.chargeId,
        movementId: expect.stringMatching(CUID),
        endToEndId: paid.endToEndId,
        refundEndToEndId: r.refundEndToEndId,
        amountCents: '10000',
        occurredAt: r.createdAt,
        refundAmountCents: r.amountCents,
      })),
    );
    // Each refund is a debit that reverses the payment's movement, visible in the statement as an outgoing Pix.
    const movements = await sql(
      `select m.id, m.direction, m.channel, m.amount_cents::text as amount, m.reverses_movement_id, m.end_to_end_id from movement m
        join pix_charge_refund r on r.movement_id = m.id where r.charge_id = $1 order by r.created_at`,
      [charge.chargeId],
    );
    expect(movements).toEqual([
      { id: events[0].data.movementId, direction: 'DEBIT', channel: 'PIX', amount: '3000', reverses_movement_id: paid.movementId, end_to_end_id: first.body.refundEndToEndId },
      { id: events[1].data.movementId, direction: 'DEBIT', channel: 'PIX', amount: '7000', reverses_movement_id: paid.movementId, end_to_end_id: second.body.refundEndToEndId },
    ]);
    const statement = await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions?${ALL_TIME}`, { headers: tenantHeaders(tenantId, alice.token) });
    const tx = statement.body.transactions.find((t: any) => t.endToEndId === first.body.refundEndToEndId);
    expect(tx).toMatchObject({ amount: 30, credit: false, type: 'PIX', status: 'DONE', statementMetadata: { pixAccountId: alicePix, beneficiary: { name: 'Joana Pagadora' } } });
    expect(tx.ledgerEntries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', -30]]);
    await expectLedgerConsistent(tenantId);
  });

  test('the same Idempotency-Key and amount return the original refund; another amount under it is 409', async () => {
    const { charge } = await paidCharge(2000);
    const idempotencyKey = randomUUID();
    const before = await balanceOf(alice.account.id);
    const a = await refund(charge.chargeId, 500, { idempotencyKey });
    const b = await refund(charge.chargeId, '500', { idempotencyKey });
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    const c = await refund(charge.chargeId, 600, { idempotencyKey });
    expect(c.status).toBe(409);
    expect(c.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await balanceOf(alice.account.id)).toBe(before - 500n);
    expect((await sql('select count(*)::int as n from pix_charge_refund where charge_id = $1', [charge.chargeId]))[0].n).toBe(1);
    expect(await eventsOf('pix.charge.refunded', charge.chargeId)).toHaveLength(1);
    // Parallel retries of one key still make one refund.
    const key2 = randomUUID();
    const parallel = await Promise.all(Array.from({ length: 4 }, () => refund(charge.chargeId, 100, { idempotencyKey: key2 })));
    expect(parallel.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(parallel.map((r) => r.body.refundId)).size).toBe(1);
    expect(await balanceOf(alice.account.id)).toBe(before - 600n);
    await expectLedgerConsistent(tenantId);
  });

  test('a refund the balance does not cover is 422 INSUFFICIENT_BALANCE, nothing moves', async () => {
    const carol = await onboarded(platform, tenantId);
    const carolPix = await pixAccountIdOf(platform, tenantId, carol.document);
    const carolKey = await apiKey(platform, tenantId, carolPix);
    const { charge } = await paidCharge(5000, { key: carolKey, pix: carolPix });
    const balance = await balanceOf(carol.account.id);
    expect(balance).toBe(5000n - PIX_IN_FEE);
    // Spend it all with a TEV to bob.
    const tev = await http('POST', `${platform.apiUrl}/v1/tev`, {
      body: { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents: String(balance) },
      headers: { authorization: `Bearer ${carolKey}`, 'idempotency-key': randomUUID() },
    });
    expect(tev.body.kind).toBe('done');
    expect(await balanceOf(carol.account.id)).toBe(0n);
    const res = await refund(charge.chargeId, 100, { key: carolKey, pix: carolPix });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('INSUFFICIENT_BALANCE');
    expect((await read(charge.chargeId, { key: carolKey, pix: carolPix })).body.refundedCents).toBe('0');
    expect(await eventsOf('pix.charge.refunded', charge.chargeId)).toEqual([]);
    await expectLedgerConsistent(tenantId);
  });

  test('an ACTIVE charge is 409 CHARGE_NOT_PAID; bad input is 400; other accounts are 403/404', async () => {
    const active = await createOk({ amountCents: 800 });
    const notPaid = await refund(active.chargeId, 100);
    expect(notPaid.status).toBe(409);
    expect(notPaid.body.code).toBe('CHARGE_NOT_PAID');

    const { charge } = await paidCharge(800);
    for (const amountCents of [0, -1, 1.5, '1.50', 'x', undefined]) {
      const res = await refund(charge.chargeId, amountCents);
      expect([amountCents, res.status, res.body.code]).toEqual([amountCents, 400, 'VALIDATION_ERROR']);
    }
    expect((await refund(charge.chargeId, 100, { idempotencyKey: null })).status).toBe(400);
    expect((await refund(charge.chargeId, 100, { idempotencyKey: 'with space' })).status).toBe(400);
    expect((await refund('nope', 100)).status).toBe(404);
    expect((await refund(charge.chargeId, 100, { pix: bobPix })).status).toBe(403);
    expect((await refund(charge.chargeId, 100, { key: bothKey, pix: bobPix })).status).toBe(404);
    expect((await read(charge.chargeId)).body.refundedCents).toBe('0');
  });
});

describe('refunds reach the payer', () => {
  /** Payers who scan alice's charges: bob in her tenant, dave in another. */
  let otherTenant: string;
  let dave: Onboarded;
  beforeAll(async () => {
    otherTenant = await newTenant(platform);
    dave = await onboarded(platform, otherTenant);
    await Promise.all([fund(platform, tenantId, bob.account.id, 100_000), fund(platform, otherTenant, dave.account.id, 100_000)]);
  }, 60_000);

  const scan = (payer: Onboarded, qrCode: string) =>
    http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
      body: { accountId: payer.account.id, pin: payer.pin, qrCode },
      headers: { ...tenantHeaders(payer.tenantId, payer.token), 'idempotency-key': randomUUID() },
    });
  const payout = async (payer: Onboarded, payoutId: string) => (await http('GET', `${platform.holderUrl}/accounts/${payer.account.id}/payouts/${payoutId}`, { headers: tenantHeaders(payer.tenantId, payer.token) })).body;
  const settlementOf = async (tenant: string) => balanceOf((await sql(`select id from account where tenant_id = $1 and kind = 'SETTLEMENT'`, [tenant]))[0].id);
  const payoutRefunds = (payoutId: string) => sql(`select tenant_id, data from event_outbox where type = 'pix.payout.refunded' and data->>'payoutId' = $1 order by created_at`, [payoutId]);
  const balanceReaches = (payer: Onboarded, cents: bigint, what: string) => waitFor(async () => (await balanceOf(payer.account.id)) === cents, 20_000, what);

  /** Alice's charge, paid by `payer` scanning its BR Code; its payout settled. */
  async function scannedCharge(payer: Onboarded, amountCents: number) {
    const charge = await createOk({ amountCents });
    const res = await scan(payer, charge.brCode);
    expect(res.status).toBe(201);
    const payoutId: string = res.body.payout.payoutId;
    const posted = await waitFor(async () => {
      const p = await payout(payer, payoutId);
      return p.status === 'POSTED' ? p : undefined;
    }, 20_000, 'the payout to settle');
    expect((await read(charge.chargeId)).body).toMatchObject({ status: 'PAID', paidCents: String(amountCents) });
    return { charge, payoutId, endToEndId: posted.metadata.endToEndId as string };
  }

  test('a holder of the same tenant gets part, then the rest, back: REFUNDED, REVERSAL entries, pix.payout.refunded each time, settlement even', async () => {
    const [payerBefore, settlementBefore] = [await balanceOf(bob.account.id), await settlementOf(tenantId)];
    const { charge, payoutId, endToEndId } = await scannedCharge(bob, 2500);
    expect(await balanceOf(bob.account.id)).toBe(payerBefore - 2500n);

    const first = await refund(charge.chargeId, 1000);
    expect(first.status).toBe(201);
    await balanceReaches(bob, payerBefore - 1500n, 'the first return to reach the payer');
    expect(await payout(bob, payoutId)).toMatchObject({ status: 'REFUNDED' });

    const second = await refund(charge.chargeId, '1500');
    expect(second.status).toBe(201);
    await balanceReaches(bob, payerBefore, 'the second return to reach the payer');

    const refunded = await payout(bob, payoutId);
    expect(refunded).toMatchObject({ status: 'REFUNDED', source: 'QR_CODE_OUT' });
    expect(refunded.entries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', '-2500'], ['REVERSAL', '1000'], ['REVERSAL', '1500']]);
    const events = await payoutRefunds(payoutId);
    expect(events.map((e: any) => [e.tenant_id, e.data])).toEqual(
      [first.body, second.body].map((r) => [
        tenantId,
        {
          payoutId,
          movementId: expect.stringMatching(CUID),
          endToEndId,
          amountCents: '2500',
          occurredAt: expect.stringMatching(ISO_UTC),
          // The return carries one end-to-end id on both sides: the receiver's refund and the payer's return.
          refundEndToEndId: r.refundEndToEndId,
          refundAmountCents: r.amountCents,
        },
      ]),
    );
    // Out and back through the tenant's settlement account: the round trip leaves it where it was.
    expect(await settlementOf(tenantId)).toBe(settlementBefore);
    expect(await balanceOf(bob.account.id)).toBe(payerBefore);
    await expectLedgerConsistent(tenantId);
  });

  test("a holder of another tenant gets a refund made after its payout's refund watch ended", async () => {
    const payerBefore = await balanceOf(dave.account.id);
    const { charge, payoutId } = await scannedCharge(dave, 900);
    expect(await temporal.workflow.getHandle(`pix-payout-${payoutId}`).result()).toBe('POSTED');
    const settlements = [await settlementOf(tenantId), await settlementOf(otherTenant)];

    const res = await refund(charge.chargeId, 900);
    expect(res.status).toBe(201);
    await balanceReaches(dave, payerBefore, 'the return to reach the payer');
    expect(await payout(dave, payoutId)).toMatchObject({ status: 'REFUNDED' });
    expect((await payoutRefunds(payoutId)).map((e: any) => [e.tenant_id, e.data.refundEndToEndId, e.data.refundAmountCents])).toEqual([[otherTenant, res.body.refundEndToEndId, '900']]);
    // The money left the receiver's tenant through its settlement account and came in through the payer's.
    expect([await settlementOf(tenantId), await settlementOf(otherTenant)]).toEqual([settlements[0]! + 900n, settlements[1]! - 900n]);
    await expectLedgerConsistent(tenantId);
    await expectLedgerConsistent(otherTenant);
  });

  test('an external payer is beyond the platform: the return leaves through the settlement account and touches no payout', async () => {
    const { charge } = await paidCharge(600);
    const settlementBefore = await settlementOf(tenantId);
    const res = await refund(charge.chargeId, 600);
    expect(res.status).toBe(201);
    expect(await settlementOf(tenantId)).toBe(settlementBefore + 600n);
    // The sandbox PSP takes the return for the payer's institution, which is not this platform.
    const [sent] = await waitFor(() => sql(`select payout_id, amount_cents::text as amount from sandbox_psp_return where end_to_end_id = $1`, [res.body.refundEndToEndId]).then((rows) => rows.length > 0 && rows), 20_000, 'the return to be sent');
    expect(sent).toEqual({ payout_id: null, amount: '600' });
    expect(await sql(`select id from event_outbox where type = 'pix.payout.refunded' and data->>'refundEndToEndId' = $1`, [res.body.refundEndToEndId])).toEqual([]);
    await expectLedgerConsistent(tenantId);
  });
});

describe('documentation', () => {
  test('the OpenAPI documents describe the charge routes and their schemas', async () => {
    const api = (await http('GET', `${platform.apiUrl}/openapi.json`)).body;
    const path = api.paths['/v1/pix-accounts/{accountId}/charges'];
    expect(Object.keys(path).sort()).toEqual(['get', 'post']);
    expect(path.post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/PixChargeRequest');
    expect(Object.keys(path.post.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '422']));
    expect(api.components.schemas.PixChargeRequest.properties.expiresInSeconds).toMatchObject({ minimum: 1, maximum: 2_592_000, default: 86_400 });
    expect(api.components.schemas.PixCharge.required).toEqual(expect.arrayContaining(['chargeId', 'txid', 'brCode', 'status', 'refundedCents']));
    expect(api.paths['/v1/pix-accounts/{accountId}/charges/{chargeId}'].get).toBeDefined();
    expect(api.paths['/v1/pix-accounts/{accountId}/charges/{chargeId}/refunds'].post.responses['422']).toBeDefined();
    const holder = (await http('GET', `${platform.holderUrl}/openapi.json`)).body;
    expect(holder.paths['/sandbox/pix/charges/{txid}/pay'].post).toBeDefined();
  });
});
