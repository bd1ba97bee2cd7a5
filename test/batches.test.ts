import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';
import { tenantState } from './support/tenant-state.ts';

// Batch payouts over HTTP, with the api, the worker (the batch's workflow, the payouts' workflows) and the sandbox PSP.
// At most 10 Pix of a batch are in flight, so that a batch of Pix takes long enough to be cancelled in the middle.
let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let carol: Onboarded;
let aliceKey: string;
const TEV_FEE = 10n;
const PIX_FEE = 100n;
beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '300', BATCH_PIX_IN_FLIGHT: '10', APPROVAL_TTL_MS: '20000' });
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--tev-out-cents', String(TEV_FEE), '--pix-out-cents', String(PIX_FEE));
  [alice, bob, carol] = (await Promise.all([0, 1, 2].map(() => onboarded(platform, tenantId)))) as [Onboarded, Onboarded, Onboarded];
  aliceKey = await apiKey(platform, tenantId, alice.account.pixAccountId);
  await fund(platform, tenantId, alice.account.id, 100_000_000);
}, 120_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

type Item = Record<string, unknown>;
const tev = (ref: string, to: Onboarded, amountCents: number | string, extra: Item = {}): Item => ({
  kind: 'TEV',
  externalRef: ref,
  amountCents: String(amountCents),
  branch: to.account.agency,
  account: to.account.number,
  ...extra,
});
const pix = (ref: string, amountCents: number | string, extra: Item = {}): Item => ({ kind: 'PIX', externalRef: ref, amountCents: String(amountCents), pixKey: 'loja@example.com', pixKeyType: 'EMAIL', ...extra });

const batches = (pixAccountId = alice.account.pixAccountId) => `${platform.apiUrl}/v1/pix-accounts/${pixAccountId}/batches`;
const send = (items: unknown, key: string = randomUUID(), apiKeyOf = aliceKey, pixAccountId?: string) =>
  http('POST', batches(pixAccountId), { body: { items }, headers: { authorization: `Bearer ${apiKeyOf}`, 'idempotency-key': key } });
const read = (batchId: string, apiKeyOf = aliceKey, pixAccountId?: string) => http('GET', `${batches(pixAccountId)}/${batchId}`, { headers: { authorization: `Bearer ${apiKeyOf}` } });
const cancel = (batchId: string, apiKeyOf = aliceKey, pixAccountId?: string) =>
  http('POST', `${batches(pixAccountId)}/${batchId}/cancel`, { headers: { authorization: `Bearer ${apiKeyOf}` } });
const itemsOf = async (batchId: string, query = '', apiKeyOf = aliceKey, pixAccountId?: string) => {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await http('GET', `${batches(pixAccountId)}/${batchId}/items?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${apiKeyOf}` } });
    expect(page.status).toBe(200);
    all.push(...page.body.items);
    cursor = page.body.pagination.nextCursor;
  } while (cursor);
  return all;
};
const ended = (batchId: string, timeoutMs = 60_000, apiKeyOf = aliceKey, pixAccountId?: string) =>
  waitFor(async () => {
    const res = await read(batchId, apiKeyOf, pixAccountId);
    return ['FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED'].includes(res.body.status) && res.body;
  }, timeoutMs, `batch ${batchId} to end`);
const batchEvents = (batchId: string) => sql(`select type, account_id, pix_account_id, data from event_outbox where type = 'payment.batch.finished' and data->>'batchId' = $1`, [batchId]);
const eventsOfPayout = (id: string) => sql(`select type, data from event_outbox where data->>'payoutId' = $1 or data->>'tevTransferId' = $1 order by type`, [id]);

describe('a batch of valid and invalid items', () => {
  test('202 with each item validated; the invalid ones listed and never paid, the others paid as payments with their events, and the batch event', async () => {
    const before = await balanceOf(alice.account.id);
    const items = [
      tev('t-ok', bob, 1500, { description: 'Fornecedor 1' }),
      tev('t-unknown', bob, 100, { branch: '0001', account: '99999999' }),
      tev('t-self', alice, 100),
      pix('p-ok', 2500, { description: 'Fornecedor 2' }),
      pix('p-unknown', 300, { pixKey: '00000000-1111-4222-8333-444444444444', pixKeyType: 'EVP' }),
      pix('p-fails', 1091),
      tev('t-carol', carol, '700'),
    ];
    const res = await send(items);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ batchId: expect.any(String), pixAccountId: alice.account.pixAccountId, approvalRequestId: null, counts: { total: 7, invalid: 3 }, amountCents: String(1500 + 2500 + 1091 + 700) });
    expect(res.body.items.map((i: any) => [i.externalRef, i.valid, i.reason])).toEqual([
      ['t-ok', true, null],
      ['t-unknown', false, 'DESTINATION_NOT_FOUND'],
      ['t-self', false, 'SAME_ACCOUNT'],
      ['p-ok', true, null],
      ['p-unknown', false, 'PIX_KEY_NOT_FOUND'],
      ['p-fails', true, null],
      ['t-carol', true, null],
    ]);
    expect(res.body.items.filter((i: any) => i.valid).every((i: any) => /^[a-z][0-9a-z]{23}$/.test(i.payoutId))).toBe(true);
    expect(res.body.items.filter((i: any) => !i.valid).every((i: any) => i.payoutId === null)).toBe(true);

    const done = await ended(res.body.batchId);
    expect(done).toMatchObject({ status: 'FINISHED', reason: null, counts: { total: 7, invalid: 3, pending: 0, processing: 0, paid: 3, failed: 1, cancelled: 0 }, paidCents: '4700' });
    expect(done.startedAt).not.toBeNull();
    const listed = await itemsOf(res.body.batchId);
    expect(listed.map((i) => [i.index, i.externalRef, i.status, i.reason])).toEqual([
      [0, 't-ok', 'PAID', null],
      [1, 't-unknown', 'INVALID', 'DESTINATION_NOT_FOUND'],
      [2, 't-self', 'INVALID', 'SAME_ACCOUNT'],
      [3, 'p-ok', 'PAID', null],
      [4, 'p-unknown', 'INVALID', 'PIX_KEY_NOT_FOUND'],
      [5, 'p-fails', 'FAILED', 'Conta do recebedor encerrada'],
      [6, 't-carol', 'PAID', null],
    ]);
    expect(listed[3]).toMatchObject({ kind: 'PIX', amountCents: '2500', description: 'Fornecedor 2', destination: { pixKey: 'loja@example.com', pixKeyType: 'EMAIL', name: expect.any(String) } });
    expect(listed[0]).toMatchObject({ kind: 'TEV', description: 'Fornecedor 1', destination: { branch: bob.account.agency, account: bob.account.number } });
    expect(listed.map((i) => i.payoutId)).toEqual(res.body.items.map((i: any) => i.payoutId));

    // Each paid item is a payment like any other: its own id, its own events; the failed Pix came back whole.
    const [tOk, , , pOk, , pFails, tCarol] = listed;
    expect((await eventsOfPayout(tOk.payoutId)).map((e) => e.type)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    expect((await eventsOfPayout(tCarol.payoutId)).map((e) => e.type)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    expect((await eventsOfPayout(pOk.payoutId)).map((e) => e.type)).toEqual(['pix.payout.succeeded']);
    expect((await eventsOfPayout(pFails.payoutId)).map((e) => e.type)).toEqual(['pix.payout.failed']);
    const [transfer] = await sql('select origin, description, external_ref from tev_transfer where id = $1', [tOk.payoutId]);
    expect(transfer).toEqual({ origin: 'BATCH', description: 'Fornecedor 1', external_ref: null });
    expect(await balanceOf(alice.account.id)).toBe(before - 1500n - 700n - 2n * TEV_FEE - 2500n - PIX_FEE);
    expect(await balanceOf(bob.account.id)).toBe(1500n);

    const [event] = await batchEvents(res.body.batchId);
    expect(event).toMatchObject({
      account_id: alice.account.id,
      pix_account_id: alice.account.pixAccountId,
      data: { batchId: res.body.batchId, status: 'FINISHED', reason: null, counts: done.counts, paidCents: '4700', occurredAt: expect.any(String) },
    });
  }, 60_000);

  test('the items page in request order with a signed cursor, and filter by status', async () => {
    const res = await send([tev('a', bob, 10), tev('b', bob, 10, { account: '88888888' }), tev('c', carol, 10), tev('d', bob, 10)]);
    await ended(res.body.batchId);
    const first = await http('GET', `${batches()}/${res.body.batchId}/items?limit=3`, { headers: { authorization: `Bearer ${aliceKey}` } });
    expect(first.body.items.map((i: any) => i.externalRef)).toEqual(['a', 'b', 'c']);
    expect(first.body.pagination).toMatchObject({ limit: 3, hasMore: true });
    const second = await http('GET', `${batches()}/${res.body.batchId}/items?limit=3&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`, { headers: { authorization: `Bearer ${aliceKey}` } });
    expect(second.body).toEqual({ items: [expect.objectContaining({ externalRef: 'd', index: 3 })], pagination: { limit: 3, nextCursor: null, hasMore: false } });
    expect((await itemsOf(res.body.batchId, '&status=INVALID')).map((i) => i.externalRef)).toEqual(['b']);
    // A cursor of another listing (another status) is refused.
    const other = await http('GET', `${batches()}/${res.body.batchId}/items?limit=3&status=PAID&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`, { headers: { authorization: `Bearer ${aliceKey}` } });
    expect(other.status).toBe(400);
  });
});

describe('funds and idempotency', () => {
  test("a batch over the balance is refused whole: 422 INSUFFICIENT_BALANCE naming the total and fees, nothing recorded or moved", async () => {
    const poor = await onboarded(platform, tenantId);
    await fund(platform, tenantId, poor.account.id, 1_000);
    const key = await apiKey(platform, tenantId, poor.account.pixAccountId);
    const state = await tenantState(tenantId);
    // 990 in amounts and 10 + 10 of fees: 1,010 > 1,000, though each item alone would pass.
    const res = await send([tev('x1', bob, 495), tev('x2', carol, 495)], randomUUID(), key, poor.account.pixAccountId);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_BALANCE', message: expect.stringContaining('990 cents and 20 cents of fees') });
    expect(await tenantState(tenantId)).toEqual(state);
    // Exactly covered: accepted, and paid.
    const fits = await send([tev('x1', bob, 490), tev('x2', carol, 490)], randomUUID(), key, poor.account.pixAccountId);
    expect(fits.status).toBe(202);
    expect((await ended(fits.body.batchId, 30_000, key, poor.account.pixAccountId)).counts.paid).toBe(2);
    expect(await balanceOf(poor.account.id)).toBe(0n);
  });

  test('the same Idempotency-Key answers the same batch and pays each item once; another body under it is 409', async () => {
    const key = randomUUID();
    const items = [tev('i1', bob, 111), pix('i2', 222), tev('i3', carol, 333)];
    const before = await balanceOf(alice.account.id);
    const [a, b] = await Promise.all([send(items, key), send(items, key)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.batchId).toBe(a.body.batchId);
    expect(b.body.items).toEqual(a.body.items);
    await ended(a.body.batchId);
    const again = await send(items, key);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ batchId: a.body.batchId, status: 'FINISHED', counts: { paid: 3 } });
    const other = await send([...items.slice(0, 2), tev('i3', carol, 334)], key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await balanceOf(alice.account.id)).toBe(before - 111n - 333n - 2n * TEV_FEE - 222n - PIX_FEE);
    expect(Number((await sql('select count(*)::int as n from payment_batch where account_id = $1 and idempotency_key = $2', [alice.account.id, key]))[0].n)).toBe(1);
  });
});

describe('a batch of 5,000 items', () => {
  test('every TEV item is paid exactly once: one transfer, its events, the balances', async () => {
    const before = await Promise.all([alice, bob, carol].map((h) => balanceOf(h.account.id)));
    const items = Array.from({ length: 5_000 }, (_, i) => tev(`salario-${i}`, i % 2 ? bob : carol, 100 + (i % 7)));
    const res = await send(items);
    expect(res.status).toBe(202);
    expect(res.body.counts).toMatchObject({ total: 5000, invalid: 0 });
    const done = await ended(res.body.batchId, 120_000);
    expect(done.counts).toEqual({ total: 5000, invalid: 0, pending: 0, processing: 0, paid: 5000, failed: 0, cancelled: 0 });
    const total = items.reduce((sum, i) => sum + BigInt(i.amountCents as string), 0n);
    expect(done.paidCents).toBe(total.toString());
    const ids = res.body.items.map((i: any) => i.payoutId);
    expect(new Set(ids).size).toBe(5000);
    const [transfers] = await sql(
      `select count(*)::int as n, count(distinct id)::int as distinct_ids, sum(amount_cents)::text as amount from tev_transfer where id = any($1) and status = 'DONE' and origin = 'BATCH'`,
      [ids],
    );
    expect(transfers).toEqual({ n: 5000, distinct_ids: 5000, amount: total.toString() });
    const [events] = await sql(`select count(*)::int as n, count(distinct data->>'tevTransferId')::int as transfers from event_outbox where type = 'tev.out.succeeded' and data->>'tevTransferId' = any($1)`, [ids]);
    expect(events).toEqual({ n: 5000, transfers: 5000 });
    const toBob = items.filter((_, i) => i % 2).reduce((sum, i) => sum + BigInt(i.amountCents as string), 0n);
    const after = await Promise.all([alice, bob, carol].map((h) => balanceOf(h.account.id)));
    expect(after).toEqual([before[0]! - total - 5000n * TEV_FEE, before[1]! + toBob, before[2]! + total - toBob]);
    expect(await batchEvents(res.body.batchId)).toHaveLength(1);
  }, 150_000);
});

describe('cancelling', () => {
  test('mid-batch: the items paid stay paid, the others are cancelled, and the batch ends FINISHED with its event', async () => {
    const items = Array.from({ length: 60 }, (_, i) => pix(`c-${i}`, 100 + i));
    const before = await balanceOf(alice.account.id);
    const res = await send(items);
    // At most 10 Pix in flight: the first ones settle while the rest wait.
    await waitFor(async () => (await read(res.body.batchId)).body.counts.paid > 0, 30_000, 'a first item paid');
    const cancelled = await cancel(res.body.batchId);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.cancelledAt).not.toBeNull();
    expect(cancelled.body.counts.cancelled).toBeGreaterThan(0);
    const done = await ended(res.body.batchId);
    expect(done.status).toBe('FINISHED');
    expect(done.counts.paid + done.counts.cancelled).toBe(60);
    expect(done.counts.paid).toBeGreaterThan(0);
    const listed = await itemsOf(res.body.batchId);
    const paid = listed.filter((i) => i.status === 'PAID');
    expect(listed.filter((i) => i.status === 'CANCELLED').every((i) => i.reason === 'CANCELLED')).toBe(true);
    // Only what was paid moved, each once; the cancelled items have no payout.
    const [payouts] = await sql(`select count(*)::int as n, coalesce(sum(amount_cents), 0)::text as amount from pix_payout where id = any($1)`, [listed.map((i) => i.payoutId)]);
    expect(payouts).toEqual({ n: paid.length, amount: paid.reduce((s, i) => s + BigInt(i.amountCents), 0n).toString() });
    expect(await balanceOf(alice.account.id)).toBe(before - BigInt(payouts.amount) - BigInt(paid.length) * PIX_FEE);
    const [event] = await batchEvents(res.body.batchId);
    expect(event.data).toMatchObject({ status: 'FINISHED', counts: { paid: paid.length, cancelled: 60 - paid.length } });
    // Cancelling again answers it as it stands.
    expect((await cancel(res.body.batchId)).body.status).toBe('FINISHED');
  }, 60_000);

  test('a batch that finished cannot be cancelled: 409 BATCH_FINISHED', async () => {
    const res = await send([tev('f1', bob, 10)]);
    await ended(res.body.batchId);
    const again = await cancel(res.body.batchId);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('BATCH_FINISHED');
  });
});

describe('dual approval', () => {
  let owner: Onboarded;
  let approver: Onboarded;
  let ownerKey: string;
  beforeAll(async () => {
    [owner, approver] = (await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)])) as [Onboarded, Onboarded];
    await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
    ownerKey = await apiKey(platform, tenantId, owner.account.pixAccountId);
    await fund(platform, tenantId, owner.account.id, 1_000_000);
  }, 60_000);

  const ownerBatch = (items: unknown) => send(items, randomUUID(), ownerKey, owner.account.pixAccountId);
  const decide = (id: string, action: 'approve' | 'reject') =>
    http('POST', `${platform.holderUrl}/approvals/${id}/${action}`, { body: { pin: approver.pin }, headers: tenantHeaders(tenantId, approver.token) });

  test('one approval covers the whole batch: held with nothing moving, then every item paid once approved', async () => {
    const before = await balanceOf(owner.account.id);
    const res = await ownerBatch([tev('d1', bob, 1000), pix('d2', 2000), tev('d3', carol, 3000), tev('d4', bob, 5, { account: '77777777' })]);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'AWAITING_APPROVAL', approvalRequestId: expect.any(String), counts: { pending: 3, invalid: 1 } });
    const pending = await http('GET', `${platform.holderUrl}/approvals?status=PENDING`, { headers: tenantHeaders(tenantId, approver.token) });
    const request = pending.body.approvals.find((a: any) => a.approvalRequestId === res.body.approvalRequestId);
    expect(request).toMatchObject({ kind: 'BATCH', amountCents: '6000', destination: { batchId: res.body.batchId, itemCount: 3 }, description: null });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await read(res.body.batchId, ownerKey, owner.account.pixAccountId)).body.status).toBe('AWAITING_APPROVAL');
    expect(await balanceOf(owner.account.id)).toBe(before);

    const approved = await decide(res.body.approvalRequestId, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'EXECUTED', result: { batchId: res.body.batchId, status: 'PROCESSING', reason: null } });
    const done = await ended(res.body.batchId, 30_000, ownerKey, owner.account.pixAccountId);
    expect(done).toMatchObject({ status: 'FINISHED', counts: { paid: 3, invalid: 1 } });
    expect(await balanceOf(owner.account.id)).toBe(before - 6000n - 2n * TEV_FEE - PIX_FEE);
    // One approval: no item asked for its own.
    expect(Number((await sql(`select count(*)::int as n from approval_request where account_id = $1`, [owner.account.id]))[0].n)).toBe(1);
  }, 60_000);

  test('rejected: the batch ends REJECTED at once, nothing paid, with its event', async () => {
    const before = await balanceOf(owner.account.id);
    const res = await ownerBatch([tev('r1', bob, 1000)]);
    expect((await decide(res.body.approvalRequestId, 'reject')).body.status).toBe('REJECTED');
    const done = await ended(res.body.batchId, 10_000, ownerKey, owner.account.pixAccountId);
    expect(done).toMatchObject({ status: 'REJECTED', reason: 'APPROVAL_REJECTED', counts: { cancelled: 1, paid: 0 } });
    expect(await balanceOf(owner.account.id)).toBe(before);
    expect((await batchEvents(res.body.batchId))[0].data).toMatchObject({ status: 'REJECTED', reason: 'APPROVAL_REJECTED' });
  });

  test('cancelled before it starts: CANCELLED with its event, its approval request withdrawn, nothing paid', async () => {
    const before = await balanceOf(owner.account.id);
    const res = await ownerBatch([tev('k1', bob, 1000), pix('k2', 500)]);
    const cancelled = await cancel(res.body.batchId, ownerKey, owner.account.pixAccountId);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', reason: 'CANCELLED', counts: { cancelled: 2 }, cancelledAt: expect.any(String), finishedAt: expect.any(String) });
    const request = await http('GET', `${platform.holderUrl}/approvals/${res.body.approvalRequestId}`, { headers: tenantHeaders(tenantId, approver.token) });
    expect(request.body).toMatchObject({ status: 'CANCELLED', cancelReason: 'BATCH_CANCELLED' });
    expect((await decide(res.body.approvalRequestId, 'approve')).status).toBe(409);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await balanceOf(owner.account.id)).toBe(before);
    expect((await batchEvents(res.body.batchId)).map((e) => e.data.status)).toEqual(['CANCELLED']);
  });
});

describe('bad input: a clear 4xx, nothing changed', () => {
  test.each([
    ['more than 5,000 items', () => Array.from({ length: 5_001 }, (_, i) => tev(`m-${i}`, bob, 1)), 'body.items'],
    ['a duplicated externalRef', () => [tev('dup', bob, 1), pix('dup', 1)], 'body.items.1.externalRef'],
    ['an amount with decimals', () => [tev('a', bob, '10.5')], 'body.items.0.amountCents'],
    ['an amount as a JSON fraction', () => [{ ...tev('a', bob, 1), amountCents: 10.5 }], 'body.items.0.amountCents'],
    ['a negative amount', () => [tev('a', bob, '-10')], 'body.items.0.amountCents'],
    ['a zero amount', () => [tev('a', bob, 0)], 'body.items.0.amountCents'],
    ['a control character in a description', () => [tev('a', bob, 1, { description: 'Sal\u0000ario' })], 'body.items.0.description'],
    ['a control character in an externalRef', () => [tev('a\u0007', bob, 1)], 'body.items.0.externalRef'],
    ['a malformed Pix key', () => [pix('a', 1, { pixKey: 'not-an-email' })], 'body.items.0.pixKey'],
    ['a key of another type', () => [pix('a', 1, { pixKey: '123', pixKeyType: 'CPF' })], 'body.items.0.pixKey'],
    ['an unknown kind', () => [{ kind: 'BOLETO', externalRef: 'a', amountCents: '1' }], 'body.items.0.kind'],
    ['a branch with letters', () => [tev('a', bob, 1, { branch: '00a1' })], 'body.items.0.branch'],
    ['no items', () => [], 'body.items'],
  ])('%s: 400 VALIDATION_ERROR naming it', async (_what, items, path) => {
    const state = await tenantState(tenantId);
    const res = await send(items());
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: any) => d.path)).toContain(path);
    expect(await tenantState(tenantId)).toEqual(state);
  });

  test('no Idempotency-Key, or a malformed one: 400', async () => {
    const state = await tenantState(tenantId);
    const none = await http('POST', batches(), { body: { items: [tev('a', bob, 1)] }, headers: { authorization: `Bearer ${aliceKey}` } });
    expect(none.status).toBe(400);
    const bad = await send([tev('a', bob, 1)], 'not a key!');
    expect(bad.status).toBe(400);
    expect(await tenantState(tenantId)).toEqual(state);
  });

  test("another account's id: 403 ACCOUNT_NOT_IN_KEY_SCOPE for the batch and its reads", async () => {
    const state = await tenantState(tenantId);
    const mine = await send([tev('own', bob, 1)]);
    await ended(mine.body.batchId);
    const other = await onboarded(platform, tenantId);
    const otherKey = await apiKey(platform, tenantId, other.account.pixAccountId);
    const res = await send([tev('a', bob, 1)], randomUUID(), aliceKey, bob.account.pixAccountId);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ACCOUNT_NOT_IN_KEY_SCOPE');
    // Another key, on its own account, does not find alice's batch; on alice's account it is refused.
    expect((await read(mine.body.batchId, otherKey, other.account.pixAccountId)).status).toBe(404);
    expect((await read(mine.body.batchId, otherKey)).status).toBe(403);
    expect((await cancel(mine.body.batchId, otherKey, other.account.pixAccountId)).status).toBe(404);
    expect((await http('GET', `${batches(other.account.pixAccountId)}/${mine.body.batchId}/items`, { headers: { authorization: `Bearer ${otherKey}` } })).status).toBe(404);
    const after = await tenantState(tenantId);
    // Only the batch of this test (and the other holder's onboarding) changed the tenant.
    expect(after.counts.payment_batch).toBe(state.counts.payment_batch! + 1);
  });
});
