/**
 * The Pix posting rules, in process: incoming Pix, a payout's debit (`debit_pix_payout`, and `debit_recorded_pix_payout`
 * for a payout recorded before the debit moved into the request), settlement, reversal and returns, a charge's payment
 * and refund, and the posting engine's shared steps the others go through (`lock_accounts`, `post_movements`), called
 * directly on the run's database. Every test has a tenant of its own, whose ledger must still be consistent (balances
 * equal the sum of their entries) and sum to zero afterwards.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { Account } from '../../src/accounts/entities.ts';
import { createCharge } from '../../src/pix/charges.ts';
import { payCharge, refundCharge } from '../../src/pix/charge-settlement.ts';
import { receivePix } from '../../src/pix/incoming.ts';
import { MASK_PAYER_VISIBLE_CPF } from '../../src/persistence/migrations/Migration20261124000500_mask_payer_visible_cpf.ts';
import { callDebitBatch, PixDebitQueue, type DebitOutcome } from '../../src/pix/payout-debits.ts';
import { debitPayout, debitUnconfirmedPayout, openPayout, payoutDebitOf, refundPayout, reversePayout, settlePayout } from '../../src/pix/payouts.ts';
import { newCuid } from '../../src/shared/ids.ts';
import { isoUtc } from '../../src/shared/pagination.ts';
import { paymentDate } from '../../src/shared/time.ts';
import { pixPayoutStart, type PayoutDebit } from '../../workflows/contracts/pix-payout.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { tenantState } from '../support/tenant-state.ts';
import { domainDatabase, fund, onboardedHolder, tenantAccountId, type HolderAccount } from './support/accounts.ts';
import { applyNotification, payoutReturned } from './support/notifications.ts';

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
  return { tenantId, holder, settlementId: await tenantAccountId(tenantId, 'SETTLEMENT'), revenueId: await tenantAccountId(tenantId, 'FEE_REVENUE') };
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
  return decided(await debitPayout(db.em(), await debitRequest(w, amountCents), 'ASK', null)).payoutId;
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

  test.each(['BLOCKED', 'CLOSED'])('an account whose holder is %s receives nothing (the provider returns it): ACCOUNT_NOT_ACTIVE', async (status) => {
    const w = await world();
    await sql('update holder set status = $2 where id = $1', [w.holder.holderId, status]);
    const before = await tenantState(w.tenantId);
    const payer = { name: 'Pagador', document: '12345678909', ispb: '12345678', institution: 'Banco', branch: '0001', account: '1' };
    await expect(receivePix(db.em(), { tenantId: w.tenantId, accountId: w.holder.accountId, amountCents: 500n, payer })).rejects.toMatchObject({
      code: 'ACCOUNT_NOT_ACTIVE',
    });
    expect(await tenantState(w.tenantId)).toEqual(before);
  });
});

describe('a payout', () => {
  test('its debit takes amount and fee at once (PROCESSING); the provider settles it: POSTED, and nothing more moves', async () => {
    const w = await world();
    const request = await debitRequest(w, 1_500n);
    const start = pixPayoutStart({ payoutId: request.payoutId, tenantId: w.tenantId, accountId: w.holder.accountId, timing: { notificationWaitMs: 1000, longestWaitMs: 60_000 } });
    const taskQueue = `test-${randomUUID()}`;
    const opening = decided(await debitPayout(db.em(), request, 'ASK', { taskQueue, start }));
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
    expect(decided(await debitPayout(db.em(), request, 'ASK', null))).toEqual(opening);
    await expect(debitPayout(db.em(), { ...request, amountCents: '1501', requestHash: 'another request' }, 'ASK', null)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
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
    expect(decided(await debitPayout(db.em(), request, 'ASK', { taskQueue: `test-${randomUUID()}`, start: pixPayoutStart({ payoutId, tenantId: w.tenantId, accountId: w.holder.accountId, timing: { notificationWaitMs: 1, longestWaitMs: 1 } }) }))).toMatchObject({
      status: 'REJECTED',
      reason: 'INSUFFICIENT_BALANCE',
    });
    expect(await sql('select 1 from workflow_start where workflow_id = $1', [`pix-payout-${payoutId}`])).toEqual([]);
    expect(await balances(w)).toEqual(AFTER_FUNDING);
    expect(await movementsOf(payoutId)).toEqual([]);
  });

  test('an account under dual approval: a request is answered APPROVAL_REQUIRED with nothing written, a lost one is REJECTED, an approved one debits', async () => {
    const w = await world();
    const approver = await onboardedHolder(db.em(), w.tenantId);
    await sql('update account set approver_holder_id = $1 where id = $2', [approver.holderId, w.holder.accountId]);
    const before = await tenantState(w.tenantId);

    // A request (ASK), alone and in a batch: decided on the locked row, nothing recorded, no hand-off.
    const asked = await debitRequest(w, 1_500n);
    const start = pixPayoutStart({ payoutId: asked.payoutId, tenantId: w.tenantId, accountId: w.holder.accountId, timing: { notificationWaitMs: 1, longestWaitMs: 1 } });
    expect(await debitPayout(db.em(), asked, 'ASK', { taskQueue: `test-${randomUUID()}`, start })).toEqual({ kind: 'approval_required' });
    const batched = await callDebitBatch(db.em(), [asked, await debitRequest(w, 1_000n)].map((debit) => ({ debit, approval: 'ASK' as const, handOff: null })));
    expect(batched.map((row) => [row.code, row.status])).toEqual([['APPROVAL_REQUIRED', null], ['APPROVAL_REQUIRED', null]]);
    expect(await tenantState(w.tenantId)).toEqual(before);
    expect(await payoutStatus(asked.payoutId)).toBeUndefined();

    // A request whose answer was lost, resolved by its workflow (REFUSE): recorded REJECTED, nothing moved.
    expect(await debitUnconfirmedPayout(db.em(), asked)).toMatchObject({ payoutId: asked.payoutId, status: 'REJECTED', reason: 'APPROVAL_REQUIRED' });
    expect(await payoutStatus(asked.payoutId)).toEqual({ status: 'REJECTED', reason: 'APPROVAL_REQUIRED' });
    expect(await balances(w)).toEqual(AFTER_FUNDING);

    // Approved (GRANTED): debited as any payment.
    const approved = await debitRequest(w, 700n);
    expect(decided(await debitPayout(db.em(), approved, 'GRANTED', null))).toMatchObject({ status: 'PROCESSING', amountCents: '700', feeCents: '100' });
    expect(await balanceOf(w.holder.accountId)).toBe(AFTER_FUNDING.holder - 700n - SEND_FEE);
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

  test('a return past the amount of a payout not seen settled is refused with its settlement undone: nothing written, not even the notification', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const state = async () => ({ payout: await payoutStatus(payoutId), movements: await movementsOf(payoutId), balances: await balances(w) });
    const before = await state();
    const id = `msg_${randomUUID()}`;
    const notification = payoutReturned(payoutId, { endToEndId: E2E, settledAt: new Date().toISOString(), returnEndToEndId: 'D00000000202601021208ddddddddddd', amountCents: 1_501n });
    await expect(applyNotification(db.em(), notification, id)).rejects.toMatchObject({ code: 'RETURN_EXCEEDS_PAYOUT', message: expect.stringContaining('1500 cents are left') });
    expect(await state()).toEqual(before);
    expect(before.payout).toEqual({ status: 'PROCESSING', reason: null });
    expect(await sql(`select type from event_outbox where data->>'payoutId' = $1`, [payoutId])).toEqual([]);
    expect(await sql('select id from pix_provider_notification where id = $1', [id])).toEqual([]);
    // The provider sends it again with what is left: settled and returned in full, once.
    const fits = payoutReturned(payoutId, { endToEndId: E2E, settledAt: new Date().toISOString(), returnEndToEndId: 'D00000000202601021208ddddddddddd', amountCents: 1_500n });
    expect((await applyNotification(db.em(), fits, id)).answer).toMatchObject({ status: 'applied', result: { payoutStatus: 'REFUNDED', refundedCents: '1500' } });
  });

  test('a return delivered before the platform saw the payout settle settles it first, then credits it', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const notified = await applyNotification(db.em(), payoutReturned(payoutId, { endToEndId: E2E, settledAt: new Date().toISOString(), returnEndToEndId: 'D00000000202601021205aaaaaaaaaaa', amountCents: 1500n }));
    expect(notified.answer.result).toEqual({ payoutId, payoutStatus: 'REFUNDED', refundedCents: '1500' });
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

describe('the posting engine: lock_accounts and post_movements (src/ledger/sql/posting.sql)', () => {
  /** A movement as `post_movements` takes it, of one line unless `lines` are given. */
  const movement = (accountId: string, amountCents: bigint, lines: bigint[] = [amountCents]) => ({
    id: newCuid(),
    account_id: accountId,
    operation_id: `engine-${randomUUID()}`,
    source: 'SETTLEMENT',
    channel: 'PIX',
    direction: amountCents < 0n ? 'DEBIT' : 'CREDIT',
    status: 'DONE',
    payout_status: null,
    status_external: 'SUCCESS',
    amount: (amountCents < 0n ? -amountCents : amountCents).toString(),
    fee: '0',
    description: 'engine',
    external_ref: null,
    end_to_end_id: null,
    reverses_movement_id: null,
    metadata: {},
    lines: lines.map((amount) => ({ id: newCuid(), kind: 'PRIMARY', amount: amount.toString() })),
  });

  /** Locks the holder and the settlement account, then posts the movements, in one transaction. */
  const post = (w: World, movements: ReturnType<typeof movement>[]) =>
    db.em().transactional(async (tx) => {
      await tx.execute(`select * from lock_accounts(?, ?::uuid[], '{SETTLEMENT}')`, [w.tenantId, `{${w.holder.accountId}}`]);
      const [posted] = await tx.execute<{ balances: (string | null)[] }[]>(
        'select post_movements(?, clock_timestamp(), posting_movements_of_json(?::jsonb))::text[] as balances',
        [w.tenantId, JSON.stringify(movements)],
      );
      return posted!.balances;
    });

  test("lock_accounts locks the holders by id, then the tenant's own accounts by id, and nothing of another tenant", async () => {
    const w = await world();
    const other = await onboardedHolder(db.em(), w.tenantId, 'Ana Segunda');
    const stranger = await onboardedHolder(db.em(), await db.tenant(), 'Titular de Outro Tenant');
    const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
    await db.em().transactional(async (tx) => {
      const locked = await tx.execute<{ id: string; kind: string }[]>(`select id, kind from lock_accounts(?, ?::uuid[], '{FEE_REVENUE,SETTLEMENT}')`, [
        w.tenantId,
        `{${[other.accountId, stranger.accountId, w.holder.accountId].join(',')}}`,
      ]);
      expect(locked).toEqual([
        ...byId([{ id: w.holder.accountId, kind: 'HOLDER' }, { id: other.accountId, kind: 'HOLDER' }]),
        ...byId([{ id: w.settlementId, kind: 'SETTLEMENT' }, { id: w.revenueId, kind: 'FEE_REVENUE' }]),
      ]);
      // Held until the transaction ends: no other transaction takes them meanwhile.
      for (const { id } of locked) {
        await expect(sql('select 1 from account where id = $1 for no key update nowait', [id])).rejects.toMatchObject({ code: '55P03' });
      }
      expect(await sql('select 1 as one from account where id = $1 for no key update nowait', [stranger.accountId])).toEqual([{ one: 1 }]);
    });
  });

  test('lines that do not sum to zero, or an account of another tenant, are refused before anything is written', async () => {
    const w = await world();
    const stranger = await onboardedHolder(db.em(), await db.tenant(), 'Titular de Outro Tenant');
    const before = await tenantState(w.tenantId);
    await expect(post(w, [movement(w.settlementId, -100n), movement(w.holder.accountId, 99n)])).rejects.toThrow('unbalanced posting: lines sum to -1');
    await expect(post(w, [movement(w.settlementId, -100n), movement(stranger.accountId, 100n)])).rejects.toThrow(
      `account ${stranger.accountId} is not an account of tenant ${w.tenantId}`,
    );
    expect(await tenantState(w.tenantId)).toEqual(before);
  });

  test("no balance but the settlement account's goes below zero, after any line; a refused posting leaves nothing", async () => {
    const w = await world();
    const before = await tenantState(w.tenantId);
    const balance = AFTER_FUNDING.holder;
    await expect(post(w, [movement(w.holder.accountId, -(balance + 1n)), movement(w.settlementId, balance + 1n)])).rejects.toThrow(
      `posting would overdraw account ${w.holder.accountId}`,
    );
    // Below zero after its first line, back to zero after its second: refused all the same.
    await expect(post(w, [movement(w.holder.accountId, -balance, [-(balance + 1n), 1n]), movement(w.settlementId, balance)])).rejects.toThrow('posting would overdraw');
    expect(await tenantState(w.tenantId)).toEqual(before);

    const posted = await post(w, [movement(w.settlementId, -500n), movement(w.holder.accountId, 500n)]);
    // Each movement's balance after it, in the order given.
    expect(posted).toEqual([(AFTER_FUNDING.settlement - 500n).toString(), (AFTER_FUNDING.holder + 500n).toString()]);
    expect(await balances(w)).toEqual({ ...AFTER_FUNDING, holder: AFTER_FUNDING.holder + 500n, settlement: AFTER_FUNDING.settlement - 500n });
  });

  test('a line of 0 cents writes no entry, and a movement left with no line is not written', async () => {
    const w = await world();
    const noFee = movement(w.revenueId, 0n);
    const credit = movement(w.holder.accountId, 500n, [500n, 0n]);
    const posted = await post(w, [movement(w.settlementId, -500n), credit, noFee]);
    // The movement left with no line has no balance after it: it was not written.
    expect(posted).toEqual([(AFTER_FUNDING.settlement - 500n).toString(), (AFTER_FUNDING.holder + 500n).toString(), null]);
    expect(await sql('select line, amount_cents::text as amount from ledger_entry where movement_id = $1', [credit.id])).toEqual([{ line: 1, amount: '500' }]);
    expect(await sql('select 1 from movement where id = $1', [noFee.id])).toEqual([]);
  });
});

/** Every movement of an operation as the statement shows it, with its entries, by source. */
const statementOf = (operationId: string) =>
  sql<Record<string, unknown> & { at: string; metadata: Record<string, unknown>; description: string }>(
    `select m.source, m.direction, m.status, m.payout_status, m.status_external, m.amount_cents::text as amount, m.fee_cents::text as fee,
            m.description, m.end_to_end_id, m.reverses_movement_id, m.metadata, ${isoUtc('m.created_at')} as at,
            (select json_agg(json_build_object('kind', e.kind, 'amount', e.amount_cents::text) order by e.line)
               from ledger_entry e where e.movement_id = m.id) as lines
       from movement m where m.operation_id = $1 order by m.source`,
    [operationId],
  );

const eventsOf = (type: string, key: string, value: string) =>
  sql(`select account_id, pix_account_id, data from event_outbox where type = $1 and data->>$2 = $3`, [type, key, value]);

const pixAccountOf = async (accountId: string): Promise<string> => (await sql('select pix_account_id from account where id = $1', [accountId]))[0].pix_account_id;

const debitOf = async (payoutId: string): Promise<string> => (await sql('select movement_id from pix_payout where id = $1', [payoutId]))[0].movement_id;

describe("what a payout's reversal and returns write", () => {
  const E2E = 'E12345678202601021200abcdefghijk';

  test('a reversal: amount and fee back on a movement that reverses the debit, the debit marked, and its event', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const debitId = await debitOf(payoutId);
    await reversePayout(db.em(), payoutId, { state: 'CANCELLED', endToEndId: E2E, reason: 'Cancelado pelo PSP' });

    const rows = await statementOf(`${payoutId}:reversal`);
    const at = rows[0]!.at;
    const common = { status: 'DONE', payout_status: null, status_external: 'SUCCESS', fee: '0', description: 'Estorno: Cancelado pelo PSP', end_to_end_id: null, reverses_movement_id: debitId, at };
    expect(rows).toEqual([
      { ...common, source: 'FEE_REVENUE', direction: 'DEBIT', amount: '100', metadata: {}, lines: [{ kind: 'REVERSAL', amount: '-100' }] },
      {
        ...common,
        source: 'REVERSAL',
        direction: 'CREDIT',
        amount: '1600',
        metadata: { date: at, endToEndId: null, reversesMovementId: debitId },
        lines: [
          { kind: 'REVERSAL', amount: '1500' },
          { kind: 'REVERSAL', amount: '100' },
        ],
      },
      { ...common, source: 'SETTLEMENT', direction: 'DEBIT', amount: '1500', metadata: {}, lines: [{ kind: 'REVERSAL', amount: '-1500' }] },
    ]);
    expect(await movementsOf(payoutId)).toEqual([
      { source: 'FEE_REVENUE', status: 'DONE', payout_status: null },
      { source: 'PIX_OUT', status: 'FAILED', payout_status: 'CANCELLED' },
      { source: 'SETTLEMENT', status: 'FAILED', payout_status: null },
    ]);
    expect(await payoutStatus(payoutId)).toEqual({ status: 'CANCELLED', reason: 'Cancelado pelo PSP' });
    expect(await eventsOf('pix.payout.cancelled', 'payoutId', payoutId)).toEqual([
      {
        account_id: w.holder.accountId,
        pix_account_id: await pixAccountOf(w.holder.accountId),
        data: { payoutId, movementId: debitId, endToEndId: E2E, amountCents: '1500', occurredAt: at, reason: 'Cancelado pelo PSP' },
      },
    ]);
  });

  test('a return: the amount back on a movement known by its end-to-end id, and its event', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    const debitId = await debitOf(payoutId);
    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: null });
    const refund = { endToEndId: 'D00000000202601021205aaaaaaaaaaa', amountCents: '400', refundedAt: '2026-01-02T12:05:00-03:00' };
    await refundPayout(db.em(), payoutId, refund);

    const rows = await statementOf(`${payoutId}:${refund.endToEndId}`);
    const at = rows[0]!.at;
    const common = { status: 'DONE', payout_status: null, status_external: 'SUCCESS', fee: '0', description: 'Devolução de Pix enviado', end_to_end_id: refund.endToEndId, reverses_movement_id: debitId, at };
    expect(rows).toEqual([
      { ...common, source: 'REVERSAL', direction: 'CREDIT', amount: '400', metadata: { date: at, endToEndId: refund.endToEndId, reversesMovementId: debitId }, lines: [{ kind: 'REVERSAL', amount: '400' }] },
      { ...common, source: 'SETTLEMENT', direction: 'DEBIT', amount: '400', metadata: {}, lines: [{ kind: 'REVERSAL', amount: '-400' }] },
    ]);
    const [credit] = await sql('select id from movement where operation_id = $1 and source = $2', [`${payoutId}:${refund.endToEndId}`, 'REVERSAL']);
    expect(await eventsOf('pix.payout.refunded', 'payoutId', payoutId)).toEqual([
      {
        account_id: w.holder.accountId,
        pix_account_id: await pixAccountOf(w.holder.accountId),
        data: {
          payoutId,
          movementId: credit.id,
          endToEndId: E2E,
          amountCents: '1500',
          occurredAt: '2026-01-02T15:05:00.000Z',
          refundEndToEndId: refund.endToEndId,
          refundAmountCents: '400',
        },
      },
    ]);
    expect(await movementsOf(payoutId)).toContainEqual({ source: 'PIX_OUT', status: 'DONE', payout_status: 'REFUNDED' });
  });

  test('a reversal, or a return, applied several times at once posts once', async () => {
    const w = await world();
    const failedId = await payout(w, 1_000n);
    const failed = { state: 'FAILED', endToEndId: E2E, reason: 'Conta destino encerrada' } as const;
    await Promise.all([1, 2, 3].map(() => reversePayout(db.em(), failedId, failed)));
    const returnedId = await payout(w, 1_500n);
    await settlePayout(db.em(), returnedId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: null });
    const refund = { endToEndId: 'D00000000202601021205aaaaaaaaaaa', amountCents: '500', refundedAt: new Date().toISOString() };
    await Promise.all([1, 2, 3].map(() => refundPayout(db.em(), returnedId, refund)));

    expect(await sql('select count(*)::int as n from movement where operation_id = $1', [`${failedId}:reversal`])).toEqual([{ n: 3 }]);
    expect(await eventsOf('pix.payout.failed', 'payoutId', failedId)).toHaveLength(1);
    expect(await sql('select count(*)::int as n from movement where operation_id = $1', [`${returnedId}:${refund.endToEndId}`])).toEqual([{ n: 2 }]);
    expect(await eventsOf('pix.payout.refunded', 'payoutId', returnedId)).toHaveLength(1);
    expect((await sql('select refunded_cents::text as refunded from pix_payout where id = $1', [returnedId]))[0]).toEqual({ refunded: '500' });
    expect(await balances(w)).toEqual({
      holder: AFTER_FUNDING.holder - 1_500n - SEND_FEE + 500n,
      settlement: AFTER_FUNDING.settlement + 1_500n - 500n,
      revenue: AFTER_FUNDING.revenue + SEND_FEE,
    });
  });

  test('a return of more than is left, or of nothing, is refused and writes nothing', async () => {
    const w = await world();
    const payoutId = await payout(w, 1_500n);
    await settlePayout(db.em(), payoutId, { state: 'POSTED', endToEndId: E2E, settledAt: new Date().toISOString(), refund: null });
    const before = await tenantState(w.tenantId);
    for (const amountCents of ['1501', '0']) {
      await expect(refundPayout(db.em(), payoutId, { endToEndId: `D00000000202601021205${amountCents.padStart(11, 'a')}`, amountCents, refundedAt: new Date().toISOString() })).rejects.toMatchObject({
        code: 'RETURN_EXCEEDS_PAYOUT',
        message: `A return of ${amountCents} cents does not fit payout ${payoutId}: 1500 cents are left to return`,
      });
    }
    expect(await tenantState(w.tenantId)).toEqual(before);
    expect(await payoutStatus(payoutId)).toEqual({ status: 'POSTED', reason: null });
  });
});

describe('a payout recorded before the debit moved into the request (openPayout, debit_recorded_pix_payout)', () => {
  /** The payout as a version that debited in its workflow recorded it: REQUESTED, nothing debited. */
  async function recorded(w: World, amountCents: bigint): Promise<string> {
    const d = await debitRequest(w, amountCents);
    await sql(
      `insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, pix_key, pix_key_type, beneficiary, qr, description,
                               idempotency_key, request_hash, status)
       values ($1, $2, $3, $4, $5, $6, $7, $8, null, $9, $10, $11, 'REQUESTED')`,
      [d.payoutId, d.tenantId, d.accountId, d.channel, d.amountCents, d.pixKey, d.pixKeyType, JSON.stringify(d.beneficiary), d.description, d.idempotencyKey, d.requestHash],
    );
    return d.payoutId;
  }

  /** An operation's movements but for what names the payout and when it posted. */
  const documents = async (payoutId: string) =>
    (await statementOf(payoutId)).map(({ at, metadata: { date, ...metadata }, description, ...movement }) => {
      if (date !== undefined) expect(date).toBe(at);
      return { ...movement, metadata, description: description.replace(payoutId, '<payout>') };
    });

  test('its debit writes what debit_pix_payout writes, once', async () => {
    const w = await world();
    const legacy = await recorded(w, 1_500n);
    const opening = await openPayout(db.em(), legacy);
    expect(opening).toEqual({ payoutId: legacy, status: 'PROCESSING', amountCents: '1500', feeCents: '100', reason: null, createdAt: expect.any(String) });
    expect(await openPayout(db.em(), legacy)).toEqual(opening);
    const current = await payout(w, 1_500n);

    expect(await documents(legacy)).toEqual(await documents(current));
    expect(await sql('select status, fee_cents::text as fee, movement_id is not null as debited from pix_payout where id = $1', [legacy])).toEqual([
      { status: 'PROCESSING', fee: '100', debited: true },
    ]);
    expect(await balances(w)).toEqual({
      holder: AFTER_FUNDING.holder - 2n * (1_500n + SEND_FEE),
      settlement: AFTER_FUNDING.settlement + 3_000n,
      revenue: AFTER_FUNDING.revenue + 2n * SEND_FEE,
    });
  });

  test('refused as debit_pix_payout refuses: REJECTED with its fee and reason, and nothing moves', async () => {
    const w = await world();
    const poor = await recorded(w, AFTER_FUNDING.holder - SEND_FEE + 1n);
    expect(await openPayout(db.em(), poor)).toMatchObject({ status: 'REJECTED', reason: 'INSUFFICIENT_BALANCE', feeCents: '100' });
    await db.em().nativeUpdate(Account, { id: w.holder.accountId }, { status: 'REJECTED' });
    const inactive = await recorded(w, 100n);
    expect(await openPayout(db.em(), inactive)).toMatchObject({ status: 'REJECTED', reason: 'SOURCE_NOT_ACTIVE', feeCents: '100' });

    expect(await balances(w)).toEqual(AFTER_FUNDING);
    for (const payoutId of [poor, inactive]) {
      expect(await movementsOf(payoutId)).toEqual([]);
      expect(await sql('select status, movement_id from pix_payout where id = $1', [payoutId])).toEqual([{ status: 'REJECTED', movement_id: null }]);
    }
  });
});

describe('an incoming Pix and a charge: what their postings write', () => {
  const taskQueue = `test-${randomUUID()}`;
  const PAYER = { name: 'Paula Pagadora', document: '***.456.789-**', ispb: '12345678', institution: 'Banco Pagador', branch: '0001', account: '555666' };

  test('an incoming Pix: the statement transaction with the payer, its counterparts and pix.in.received', async () => {
    const w = await world();
    const received = await receivePix(db.em(), { tenantId: w.tenantId, accountId: w.holder.accountId, amountCents: 2_000n, endToEndId: 'E12345678202601021200zzzzzzzzzzz', payer: PAYER });
    const e2e = received.endToEndId;
    const rows = await statementOf(e2e);
    const at = rows[0]!.at;
    const common = { status: 'DONE', payout_status: null, status_external: 'SUCCESS', end_to_end_id: e2e, reverses_movement_id: null, at };
    expect(rows).toEqual([
      { ...common, source: 'FEE_REVENUE', direction: 'CREDIT', amount: '10', fee: '0', description: `Tarifa Pix ${e2e}`, metadata: {}, lines: [{ kind: 'FEE', amount: '10' }] },
      {
        ...common,
        source: 'PIX_IN',
        direction: 'CREDIT',
        amount: '2000',
        fee: '10',
        description: `Pix recebido de ${PAYER.name}`,
        metadata: { date: at, endToEndId: e2e, paymentDate: paymentDate(new Date(at)), payer: PAYER, beneficiary: { branch: w.holder.agency, account: w.holder.number } },
        lines: [
          { kind: 'PRIMARY', amount: '2000' },
          { kind: 'FEE', amount: '-10' },
        ],
      },
      { ...common, source: 'SETTLEMENT', direction: 'DEBIT', amount: '2000', fee: '0', description: `Pix in ${e2e}`, metadata: {}, lines: [{ kind: 'PRIMARY', amount: '-2000' }] },
    ]);
    const [credit] = await sql('select id, balance_after_cents::text as balance from movement where operation_id = $1 and source = $2', [e2e, 'PIX_IN']);
    expect(received).toEqual({ movementId: credit.id, endToEndId: e2e, amountCents: '2000', feeCents: '10', balanceAfterCents: credit.balance });
    const [coreAccountId] = (await sql('select core_account_id from account where id = $1', [w.holder.accountId])).map((r) => r.core_account_id);
    const pixAccountId = await pixAccountOf(w.holder.accountId);
    expect(await eventsOf('pix.in.received', 'endToEndId', e2e)).toEqual([
      {
        account_id: w.holder.accountId,
        pix_account_id: pixAccountId,
        data: {
          payerName: PAYER.name,
          endToEndId: e2e,
          movementId: credit.id,
          receivedAt: at,
          amountCents: '2000',
          payerBranch: PAYER.branch,
          paymentDate: paymentDate(new Date(at)),
          payerAccount: PAYER.account,
          pixAccountId,
          coreAccountId,
          payerDocument: PAYER.document,
          payerInstitution: PAYER.institution,
        },
      },
    ]);
  });

  /** A charge of the holder, paid in full by PAYER. */
  async function paidCharge(w: World, amountCents: bigint) {
    const account = await db.em().findOneOrFail(Account, { id: w.holder.accountId });
    const { charge } = await createCharge(db.em(), taskQueue, account, 'Loja da Maria', 'https://pix.example.test', randomUUID(), { amountCents, expiresInSeconds: 3_600, tag: null });
    const { paid } = await payCharge(db.em(), taskQueue, { tenantId: w.tenantId, txid: charge.txid, payer: PAYER });
    return { account, charge, paid };
  }

  test("a charge's payment names the charge; its refund leaves the account for the payer, recorded with its event", async () => {
    const w = await world();
    const { account, charge, paid } = await paidCharge(w, 3_000n);
    const payment = (await statementOf(paid.endToEndId)).find((m) => m.source === 'PIX_IN')!;
    expect(payment).toMatchObject({
      description: `Pix recebido de ${PAYER.name} (cobrança)`,
      metadata: { date: payment.at, endToEndId: paid.endToEndId, txid: charge.txid, chargeId: charge.id, payer: PAYER },
    });
    expect(paid.paidAt).toBe(payment.at);

    const { refund } = await refundCharge(db.em(), taskQueue, account, charge.id, randomUUID(), 1_000n);
    const rows = await statementOf(refund.refundId);
    const at = rows[0]!.at;
    const e2e = refund.refundEndToEndId;
    const common = { status: 'DONE', payout_status: null, status_external: 'SUCCESS', amount: '1000', fee: '0', end_to_end_id: e2e, at };
    expect(rows).toEqual([
      {
        ...common,
        source: 'REVERSAL',
        direction: 'DEBIT',
        description: `Devolução de Pix para ${PAYER.name}`,
        reverses_movement_id: paid.movementId,
        metadata: {
          date: at,
          endToEndId: e2e,
          paymentDate: paymentDate(new Date(at)),
          payer: { branch: w.holder.agency, account: w.holder.number },
          beneficiary: PAYER,
          originalEndToEndId: paid.endToEndId,
          txid: charge.txid,
          chargeId: charge.id,
        },
        lines: [{ kind: 'PRIMARY', amount: '-1000' }],
      },
      { ...common, source: 'SETTLEMENT', direction: 'CREDIT', description: `Pix devolução ${e2e}`, reverses_movement_id: null, metadata: {}, lines: [{ kind: 'PRIMARY', amount: '1000' }] },
    ]);
    expect(refund).toEqual({ refundId: refund.refundId, chargeId: charge.id, amountCents: '1000', refundEndToEndId: e2e, createdAt: at });
    const [debit] = await sql('select id from movement where operation_id = $1 and source = $2', [refund.refundId, 'REVERSAL']);
    expect(await sql('select r.movement_id, r.created_at = m.created_at as posted_then from pix_charge_refund r join movement m on m.id = r.movement_id where r.id = $1', [refund.refundId])).toEqual([
      { movement_id: debit.id, posted_then: true },
    ]);
    expect((await sql('select refunded_cents::text as refunded from pix_charge where id = $1', [charge.id]))[0]).toEqual({ refunded: '1000' });
    expect(await eventsOf('pix.charge.refunded', 'chargeId', charge.id)).toEqual([
      {
        account_id: w.holder.accountId,
        pix_account_id: account.pixAccountId,
        data: {
          tag: null,
          txid: charge.txid,
          chargeId: charge.id,
          movementId: debit.id,
          endToEndId: paid.endToEndId,
          refundEndToEndId: e2e,
          amountCents: '3000',
          occurredAt: at,
          refundAmountCents: '1000',
        },
      },
    ]);
  });

  test('a refund the balance does not cover is refused with INSUFFICIENT_BALANCE, and nothing moves', async () => {
    const w = await world();
    const { account, charge } = await paidCharge(w, 3_000n);
    // Spent down to 999 cents.
    await payout(w, AFTER_FUNDING.holder + 3_000n - RECEIVE_FEE - SEND_FEE - 999n);
    const before = await tenantState(w.tenantId);
    await expect(refundCharge(db.em(), taskQueue, account, charge.id, randomUUID(), 1_000n)).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(await tenantState(w.tenantId)).toEqual(before);
    expect(await sql('select 1 from pix_charge_refund where charge_id = $1', [charge.id])).toEqual([]);
    expect((await sql('select refunded_cents::text as refunded from pix_charge where id = $1', [charge.id]))[0]).toEqual({ refunded: '0' });
  });
});

describe('the request path batches debits (PixDebitQueue)', () => {
  test('debits that wait while the lane is busy go together in one transaction and answer as they would alone', async () => {
    const w = await world();
    const queue = new PixDebitQueue(db.em(), { PIX_BATCH_LANES: 1, PIX_BATCH_MAX: 16, TEV_RESPONSE_DEADLINE_MS: 5_000 });
    const requests = await Promise.all([1_000n, 1_000n, 1_000n, 1_000n, 9_000n].map((amount) => debitRequest(w, amount)));
    const again = { ...requests[1]! };
    const reused = { ...requests[2]!, amountCents: '1001', requestHash: 'another request' };
    const results = await Promise.allSettled([...requests, again, reused].map((debit) => queue.debit({ debit, approval: 'ASK', handOff: null })));
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
  const answers = await Promise.all(requests.map((debit) => queue.debit({ debit, approval: 'ASK', handOff: null })));
  const stored = await sql<{ id: string; status: string }>('select id, status from pix_payout where id = any($1)', [requests.map((r) => r.payoutId)]);
  const statusOf = new Map(stored.map((r) => [r.id, r.status]));
  expect(answers.map((a) => decided(a).status)).toEqual(requests.map((r) => statusOf.get(r.payoutId)));
  expect(answers.map((a) => decided(a).status)).toEqual(amounts.map((a) => (a === 100n ? 'PROCESSING' : 'REJECTED')));
});
