/**
 * The Pix posting rules, in process: incoming Pix, a payout's debit (`debit_pix_payout`), settlement, reversal and refund, and
 * the posting guards the others go through (`postMovements`), called directly on the run's database. Every test has a
 * tenant of its own, whose ledger must still be consistent and sum to zero afterwards.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { Account } from '../../src/accounts/entities.ts';
import { feeRevenueAccountId, InsufficientBalance, lockAccounts, postMovements, settlementAccountId, type MovementInput } from '../../src/ledger/posting.ts';
import { receivePix } from '../../src/pix/incoming.ts';
import { MASK_PAYER_VISIBLE_CPF } from '../../src/persistence/migrations/Migration20261124000500_mask_payer_visible_cpf.ts';
import { PixDebitQueue, type DebitOutcome } from '../../src/pix/payout-debits.ts';
import { debitPayout, payoutDebitOf, receivePayoutReturn, refundPayout, reversePayout, settlePayout } from '../../src/pix/payouts.ts';
import { pixPayoutStart, type PayoutDebit } from '../../workflows/contracts/pix-payout.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { tenantState } from '../support/tenant-state.ts';
import { domainDatabase, fund, onboardedHolder, type HolderAccount } from './support/accounts.ts';

const RECEIVE_FEE = 10n;
const SEND_FEE = 100n;

const db = domainDatabase();

interface World {
  tenantId: string;
  holder: HolderAccount;
  settlementId: string;
  revenueId: string;
}

/** A tenant charging R$ 0,10 per Pix received and R$ 1,00 per Pix sent, and a holder who received R$ 100,00. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ pixIn: RECEIVE_FEE, pixOut: SEND_FEE });
  const holder = await onboardedHolder(em, tenantId);
  await fund(em, tenantId, holder.accountId, 10_000n);
  return { tenantId, holder, settlementId: await settlementAccountId(em, tenantId), revenueId: await feeRevenueAccountId(em, tenantId) };
}

const balances = async (w: World) => ({
  holder: await balanceOf(w.holder.accountId),
  settlement: await balanceOf(w.settlementId),
  revenue: await balanceOf(w.revenueId),
});

/** What the world starts with: the incoming R$ 100,00 came from the settlement account, its fee went to revenue. */
const AFTER_FUNDING = { holder: 10_000n - RECEIVE_FEE, settlement: -10_000n, revenue: RECEIVE_FEE };

const JOAO = { ispb: '87654321', name: 'João Recebedor', document: '12345678909', institution: 'Outro Banco', branch: '0002', account: '99887766', accountType: 'CACC' };

/** A payment request of `amountCents` to João's e-mail key, as the payment endpoint debits it. */
async function debitRequest(w: World, amountCents: bigint, idempotencyKey = randomUUID()): Promise<PayoutDebit> {
  const account = await db.em().findOneOrFail(Account, { id: w.holder.accountId });
  return payoutDebitOf('test-pepper', {
    tenantId: w.tenantId,
    account,
    channel: 'PIX_OUT',
    amountCents,
    pixKey: 'joao@example.com',
    pixKeyType: 'EMAIL',
    beneficiary: JOAO,
    qr: null,
    description: 'Pix para João',
    idempotencyKey,
  });
}

const decided = (outcome: DebitOutcome) => {
  if (outcome.kind !== 'decided') throw new Error(`not decided: ${JSON.stringify(outcome)}`);
  return outcome.opening;
};

/** Debits a payout (no hand-off) and answers its id. */
async function payout(w: World, amountCents: bigint): Promise<string> {
  return decided(await debitPayout(db.em(), await debitRequest(w, amountCents), null)).payoutId;
}

const payoutStatus = async (payoutId: string) => (await sql('select status, reason from pix_payout where id = $1', [payoutId]))[0];
const movementsOf = (payoutId: string) =>
  sql<{ source: string; status: string; payout_status: string | null }>(
    `select source, status, payout_status from movement where operation_id = $1 order by source`,
    [payoutId],
  );

describe('incoming Pix', () => {
  test('the amount comes from the settlement account; the receive fee goes to revenue', async () => {
    const w = await world();
    expect(await balances(w)).toEqual(AFTER_FUNDING);
    const entries = await sql<{ source: string; kind: string; amount: string }>(
      `select m.source, e.kind, e.amount_cents::text as amount from movement m join ledger_entry e on e.movement_id = m.id
        where m.tenant_id = $1 order by m.source, e.line`,
      [w.tenantId],
    );
    expect(entries).toEqual([
      { source: 'FEE_REVENUE', kind: 'FEE', amount: '10' },
      { source: 'PIX_IN', kind: 'PRIMARY', amount: '10000' },
      { source: 'PIX_IN', kind: 'FEE', amount: '-10' },
      { source: 'SETTLEMENT', kind: 'PRIMARY', amount: '-10000' },
    ]);
  });

  test('an amount not above the receive fee, or an account not APPROVED, is refused and writes nothing', async () => {
    const w = await world();
    const before = await tenantState(w.tenantId);
    const payer = { name: 'Pagador', document: '12345678909', ispb: '12345678', institution: 'Banco', branch: '0001', account: '1' };
    await expect(receivePix(db.em(), { tenantId: w.tenantId, accountId: w.holder.accountId, amountCents: RECEIVE_FEE, payer })).rejects.toMatchObject({
      code: 'AMOUNT_BELOW_RECEIVE_FEE',
    });
    await db.em().nativeUpdate(Account, { id: w.holder.accountId }, { status: 'REJECTED' });
    const rejected = await tenantState(w.tenantId);
    await expect(receivePix(db.em(), { tenantId: w.tenantId, accountId: w.holder.accountId, amountCents: 500n, payer })).rejects.toMatchObject({
      code: 'ACCOUNT_NOT_APPROVED',
    });
    expect(before.counts).toEqual(rejected.counts);
    expect(await tenantState(w.tenantId)).toEqual(rejected);
  });
});

describe('a payout', () => {
  test('its debit takes amount and fee at once (PROCESSING); the provider settles it: POSTED, and nothing more moves', async () => {
    const w = await world();
    const request = await debitRequest(w, 1_500n);
    const start = pixPayoutStart({ payoutId: request.payoutId, tenantId: w.tenantId, accountId: w.holder.accountId, timing: { notificationWaitMs: 1000, longestWaitMs: 60_000 } });
    const taskQueue = `test-${randomUUID()}`;
    const opening = decided(await debitPayout(db.em(), request, { taskQueue, start }));
    const payoutId = request.payoutId;
    expect(opening).toMatchObject({ payoutId, status: 'PROCESSING', amountCents: '1500', feeCents: '100', reason: null });
    // The settlement workflow's hand-off, in the same transaction, due at once.
    expect(await sql('select workflow_id, args, next_attempt_at <= now() as due from workflow_start where task_queue = $1', [taskQueue])).toEqual([
      { workflow_id: `pix-payout-${payoutId}`, args: start.args, due: true },
    ]);
    const debited = { holder: AFTER_FUNDING.holder - 1_500n - SEND_FEE, settlement: AFTER_FUNDING.settlement + 1_500n, revenue: AFTER_FUNDING.revenue + SEND_FEE };
    expect(await balances(w)).toEqual(debited);
    expect(await movementsOf(payoutId)).toEqual([
      { source: 'FEE_REVENUE', status: 'DONE', payout_status: null },
      { source: 'PIX_OUT', status: 'PENDING', payout_status: 'PROCESSING' },
      { source: 'SETTLEMENT', status: 'PENDING', payout_status: null },
    ]);
    // The same request again answers as the first did, and debits nothing more; another request under its key is 409.
    expect(decided(await debitPayout(db.em(), request, null))).toEqual(opening);
    await expect(debitPayout(db.em(), { ...request, amountCents: '1501', requestHash: 'another request' }, null)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await balances(w)).toEqual(debited);

    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: 'E12345678202601021200abcdefghijk', settledAt: new Date().toISOString(), refund: null });
    expect(await payoutStatus(payoutId)).toEqual({ status: 'POSTED', reason: null });
    expect(await movementsOf(payoutId)).toEqual([
      { source: 'FEE_REVENUE', status: 'DONE', payout_status: null },
      { source: 'PIX_OUT', status: 'DONE', payout_status: 'POSTED' },
      { source: 'SETTLEMENT', status: 'DONE', payout_status: null },
    ]);
    expect(await balances(w)).toEqual(debited);
  });

  test("the receiver's CPF is stored as the payer may see it; one recorded whole before that is masked by the upgrade", async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const shown = async () => ({
      payout: (await sql(`select beneficiary->>'document' as d from pix_payout where id = $1`, [payoutId]))[0].d,
      debit: (await sql(`select metadata->'beneficiary'->>'document' as d from movement where operation_id = $1 and source = 'PIX_OUT'`, [payoutId]))[0].d,
    });
    expect(await shown()).toEqual({ payout: '***.456.789-**', debit: '***.456.789-**' });

    // As a payout recorded before the mask existed had it.
    await sql(`update pix_payout set beneficiary = jsonb_set(beneficiary, '{document}', '"12345678909"') where id = $1`, [payoutId]);
    await sql(`update movement set metadata = jsonb_set(metadata, '{beneficiary,document}', '"12345678909"') where operation_id = $1 and source = 'PIX_OUT'`, [payoutId]);
    for (const statement of MASK_PAYER_VISIBLE_CPF) await sql(statement);
    expect(await shown()).toEqual({ payout: '***.456.789-**', debit: '***.456.789-**' });
  });

  test('a balance that covers the amount but not the fee: REJECTED with INSUFFICIENT_BALANCE, nothing moves', async () => {
    const w = await world();
    const request = await debitRequest(w, AFTER_FUNDING.holder - SEND_FEE + 1n);
    const payoutId = request.payoutId;
    expect(decided(await debitPayout(db.em(), request, { taskQueue: `test-${randomUUID()}`, start: pixPayoutStart({ payoutId, tenantId: w.tenantId, accountId: w.holder.accountId, timing: { notificationWaitMs: 1, longestWaitMs: 1 } }) }))).toMatchObject({
      status: 'REJECTED',
      reason: 'INSUFFICIENT_BALANCE',
    });
    expect(await sql('select 1 from workflow_start where workflow_id = $1', [`pix-payout-${payoutId}`])).toEqual([]);
    expect(await balances(w)).toEqual(AFTER_FUNDING);
    expect(await movementsOf(payoutId)).toEqual([]);
  });

  test('FAILED at the provider: amount and fee return as a reversal, once', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const failed = { state: 'FAILED', endToEndId: 'E12345678202601021200abcdefghijk', reason: 'Conta destino encerrada' } as const;
    await reversePayout(db.em(), payoutId, failed);
    await reversePayout(db.em(), payoutId, failed);
    expect(await payoutStatus(payoutId)).toEqual({ status: 'FAILED', reason: 'Conta destino encerrada' });
    expect(await balances(w)).toEqual(AFTER_FUNDING);
    const reversal = await sql<{ account_id: string; kind: string; amount: string }>(
      `select m.account_id, e.kind, e.amount_cents::text as amount from movement m join ledger_entry e on e.movement_id = m.id
        where m.operation_id = $1 order by e.amount_cents`,
      [`${payoutId}:reversal`],
    );
    expect(reversal).toEqual([
      { account_id: w.settlementId, kind: 'REVERSAL', amount: '-1500' },
      { account_id: w.revenueId, kind: 'REVERSAL', amount: '-100' },
      { account_id: w.holder.accountId, kind: 'REVERSAL', amount: '100' },
      { account_id: w.holder.accountId, kind: 'REVERSAL', amount: '1500' },
    ]);
  });

  test('refunded after settlement: the refunded amount (not the fee) is credited back, once', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: 'E12345678202601021200abcdefghijk', settledAt: new Date().toISOString(), refund: null });
    const refund = { endToEndId: 'D12345678202601021205abcdefghijk', amountCents: '500', refundedAt: new Date().toISOString() };
    await refundPayout(db.em(), payoutId, refund);
    await refundPayout(db.em(), payoutId, refund);
    expect(await payoutStatus(payoutId)).toMatchObject({ status: 'REFUNDED' });
    expect(await balances(w)).toEqual({
      holder: AFTER_FUNDING.holder - 1_500n - SEND_FEE + 500n,
      settlement: AFTER_FUNDING.settlement + 1_500n - 500n,
      revenue: AFTER_FUNDING.revenue + SEND_FEE,
    });
  });
});

describe('returns of a payout (a charge it paid refunded by the receiver)', () => {
  const E2E = 'E12345678202601021200abcdefghijk';
  const returned = (endToEndId: string, amountCents: string) => ({ endToEndId, amountCents, refundedAt: new Date().toISOString() });
  const refundEvents = (payoutId: string) =>
    sql<{ refund: string; amount: string }>(
      `select data->>'refundEndToEndId' as refund, data->>'refundAmountCents' as amount from event_outbox where type = 'pix.payout.refunded' and data->>'payoutId' = $1 order by created_at`,
      [payoutId],
    );

  test('returned in parts: each return is credited once by its end-to-end id, and together they never pass the amount', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: null });
    const first = returned('D00000000202601021205aaaaaaaaaaa', '500');
    await refundPayout(db.em(), payoutId, first);
    await refundPayout(db.em(), payoutId, first);
    await refundPayout(db.em(), payoutId, returned('D00000000202601021206bbbbbbbbbbb', '1000'));
    await expect(refundPayout(db.em(), payoutId, returned('D00000000202601021207ccccccccccc', '1'))).rejects.toThrow(/does not fit/);

    expect((await sql('select status, refunded_cents::text as refunded from pix_payout where id = $1', [payoutId]))[0]).toEqual({ status: 'REFUNDED', refunded: '1500' });
    expect(await refundEvents(payoutId)).toEqual([
      { refund: 'D00000000202601021205aaaaaaaaaaa', amount: '500' },
      { refund: 'D00000000202601021206bbbbbbbbbbb', amount: '1000' },
    ]);
    // The fee stays paid; the whole amount is back, out of the settlement account.
    expect(await balances(w)).toEqual({ holder: AFTER_FUNDING.holder - SEND_FEE, settlement: AFTER_FUNDING.settlement, revenue: AFTER_FUNDING.revenue + SEND_FEE });
  });

  test('a return delivered before the platform saw the payout settle settles it first, then credits it', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    await receivePayoutReturn(db.em(), payoutId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: returned('D00000000202601021205aaaaaaaaaaa', '1500') });
    // The provider's settlement, when the workflow reads it later, changes nothing.
    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: null });

    expect(await payoutStatus(payoutId)).toEqual({ status: 'REFUNDED', reason: null });
    expect(await movementsOf(payoutId)).toEqual([
      { source: 'FEE_REVENUE', status: 'DONE', payout_status: null },
      { source: 'PIX_OUT', status: 'DONE', payout_status: 'REFUNDED' },
      { source: 'SETTLEMENT', status: 'DONE', payout_status: null },
    ]);
    const events = await sql<{ type: string }>(`select type from event_outbox where data->>'payoutId' = $1`, [payoutId]);
    expect(events.map((e) => e.type).sort()).toEqual(['pix.payout.refunded', 'pix.payout.succeeded']);
    expect(await balances(w)).toEqual({ holder: AFTER_FUNDING.holder - SEND_FEE, settlement: AFTER_FUNDING.settlement, revenue: AFTER_FUNDING.revenue + SEND_FEE });
  });
});

describe('postMovements, the guard of every Pix posting', () => {
  const line = (w: World, accountId: string, amountCents: bigint): MovementInput => ({
    accountId,
    tenantId: w.tenantId,
    operationId: `guard-${randomUUID()}`,
    source: 'SETTLEMENT',
    channel: 'PIX',
    direction: amountCents < 0n ? 'DEBIT' : 'CREDIT',
    status: 'DONE',
    payoutStatus: null,
    statusExternal: 'SUCCESS',
    amountCents: amountCents < 0n ? -amountCents : amountCents,
    feeCents: 0n,
    description: 'guard',
    externalRef: null,
    endToEndId: null,
    reversesMovementId: null,
    metadata: {},
    lines: [{ kind: 'PRIMARY', amountCents }],
  });

  const post = (w: World, movements: (w: World) => MovementInput[]) =>
    db.em().transactional(async (tx) => postMovements(tx, await lockAccounts(tx, [w.holder.accountId, w.settlementId]), movements(w)));

  test('lines that do not sum to zero are refused before anything is written', async () => {
    const w = await world();
    const before = await tenantState(w.tenantId);
    await expect(post(w, (v) => [line(v, v.settlementId, -100n), line(v, v.holder.accountId, 99n)])).rejects.toThrow('unbalanced posting: lines sum to -1');
    expect(await tenantState(w.tenantId)).toEqual(before);
  });

  test('a holder balance may not go below zero; the settlement account may', async () => {
    const w = await world();
    const before = await tenantState(w.tenantId);
    const overdraw = (v: World) => [line(v, v.holder.accountId, -(AFTER_FUNDING.holder + 1n)), line(v, v.settlementId, AFTER_FUNDING.holder + 1n)];
    await expect(post(w, overdraw)).rejects.toBeInstanceOf(InsufficientBalance);
    expect(await tenantState(w.tenantId)).toEqual(before);
    await post(w, (v) => [line(v, v.settlementId, -500n), line(v, v.holder.accountId, 500n)]);
    expect(await balances(w)).toEqual({ ...AFTER_FUNDING, holder: AFTER_FUNDING.holder + 500n, settlement: AFTER_FUNDING.settlement - 500n });
  });
});

describe('the request path batches debits (PixDebitQueue)', () => {
  test('debits that wait while the lane is busy go together in one transaction and answer as they would alone', async () => {
    const w = await world();
    const queue = new PixDebitQueue(db.em(), { PIX_BATCH_LANES: 1, PIX_BATCH_MAX: 16, TEV_RESPONSE_DEADLINE_MS: 5_000 });
    const requests = await Promise.all([1_000n, 1_000n, 1_000n, 1_000n, 9_000n].map((amount) => debitRequest(w, amount)));
    const again = { ...requests[1]! };
    const reused = { ...requests[2]!, amountCents: '1001', requestHash: 'another request' };
    const results = await Promise.allSettled([...requests, again, reused].map((debit) => queue.debit({ debit, handOff: null })));
    const answers = results.map((r) => (r.status === 'fulfilled' ? decided(r.value).status : (r.reason as { code: string }).code));
    // The first goes alone; the others waited for the lane and went together, in arrival order: the fifth no longer
    // fits the balance; the same request again answers the first's; another request under a used key is 409.
    expect(answers).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING', 'PROCESSING', 'REJECTED', 'PROCESSING', 'IDEMPOTENCY_KEY_REUSED']);
    const transactions = await sql<{ n: number }>('select count(distinct xmin::text)::int as n from pix_payout where id = any($1)', [requests.map((r) => r.payoutId)]);
    expect(transactions).toEqual([{ n: 2 }]);
    expect(await balances(w)).toEqual({
      holder: AFTER_FUNDING.holder - 4n * (1_000n + SEND_FEE),
      settlement: AFTER_FUNDING.settlement + 4_000n,
      revenue: AFTER_FUNDING.revenue + 4n * SEND_FEE,
    });
  });
});

test('a batch of more than nine debits answers each request with its own outcome', async () => {
  const w = await world();
  const queue = new PixDebitQueue(db.em(), { PIX_BATCH_LANES: 1, PIX_BATCH_MAX: 16, TEV_RESPONSE_DEADLINE_MS: 5_000 });
  // Every third request asks for more than the account holds: REJECTED wherever it falls in the batch.
  const amounts = Array.from({ length: 14 }, (_, i) => (i % 3 === 2 ? 1_000_000n : 100n));
  const requests = await Promise.all(amounts.map((amount) => debitRequest(w, amount)));
  const answers = await Promise.all(requests.map((debit) => queue.debit({ debit, handOff: null })));
  const stored = await sql<{ id: string; status: string }>('select id, status from pix_payout where id = any($1)', [requests.map((r) => r.payoutId)]);
  const statusOf = new Map(stored.map((r) => [r.id, r.status]));
  expect(answers.map((a) => decided(a).status)).toEqual(requests.map((r) => statusOf.get(r.payoutId)));
  expect(answers.map((a) => decided(a).status)).toEqual(amounts.map((a) => (a === 100n ? 'PROCESSING' : 'REJECTED')));
});
