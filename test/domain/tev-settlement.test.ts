/**
 * The TEV posting rules, in process: `settleTev` (and `resolveTev`, the resolution workflow's step) called directly on
 * the run's database, with no HTTP and no workflow. Every test has a tenant of its own, whose ledger must still be
 * consistent and sum to zero afterwards.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { Account } from '../../src/accounts/entities.ts';
import { Holder } from '../../src/identity/entities.ts';
import { setBlocked } from '../../src/identity/service.ts';
import { resolveTev, SANDBOX_FAILURE, settleTev, type SettleMode } from '../../src/transfers/settlement.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { tenantState } from '../support/tenant-state.ts';
import { domainDatabase, fund, onboardedHolder, tenantAccountId, type HolderAccount } from './support/accounts.ts';
import { tevSubmission } from './support/tev.ts';

const SEND_FEE = 50n;
const RECEIVE_FEE = 20n;
const LIMIT = 500_000n;
const config = { TEV_MAX_AMOUNT_CENTS: LIMIT };

const db = domainDatabase();

interface World {
  tenantId: string;
  payer: HolderAccount;
  payee: HolderAccount;
  revenueId: string;
}

/** A tenant charging R$ 0,50 to send and R$ 0,20 to receive, a payer with R$ 100,00 and a payee with nothing. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ tevOut: SEND_FEE, tevIn: RECEIVE_FEE });
  const [payer, payee] = await Promise.all([onboardedHolder(em, tenantId, 'Maria Pagadora'), onboardedHolder(em, tenantId, 'João Recebedor')]);
  await fund(em, tenantId, payer.accountId, 10_000n);
  return { tenantId, payer, payee, revenueId: await tenantAccountId(tenantId, 'FEE_REVENUE') };
}

const transfer = (w: World, amountCents: bigint, overrides: Partial<TevSubmission> = {}): TevSubmission =>
  tevSubmission(w.tenantId, w.payer.accountId, { accountId: w.payee.accountId }, amountCents, overrides);

const settle = (s: TevSubmission, mode: SettleMode = 'SUBMIT', c: { TEV_MAX_AMOUNT_CENTS: bigint } = config) => settleTev(db.em(), c, s, mode);

const balances = async (w: World) => ({
  payer: await balanceOf(w.payer.accountId),
  payee: await balanceOf(w.payee.accountId),
  revenue: await balanceOf(w.revenueId),
});

/** The transfer's ledger: each movement's entries, as (account, source, kind, signed cents). */
const entriesOf = (tevId: string) =>
  sql<{ account_id: string; source: string; kind: string; amount: string }>(
    `select m.account_id, m.source, e.kind, e.amount_cents::text as amount
       from movement m join ledger_entry e on e.movement_id = m.id
      where m.operation_id = $1 order by m.source, e.line`,
    [tevId],
  );

const eventsOf = (tevId: string) => sql<{ type: string }>(`select type from event_outbox where data->>'tevTransferId' = $1 order by type`, [tevId]).then((rows) => rows.map((r) => r.type));

const recordOf = async (tevId: string) => (await sql('select status, reason, fee_out_cents::text as fee_out, fee_in_cents::text as fee_in from tev_transfer where id = $1', [tevId]))[0];

describe('a transfer that settles', () => {
  test('DONE: amount and send fee leave the payer, the amount less the receive fee reaches the payee, both fees the revenue', async () => {
    const w = await world();
    const s = transfer(w, 1_000n, { description: 'Aluguel', externalRef: 'order-1' });
    const settled = await settle(s);
    expect(settled).toEqual({
      code: 'DONE',
      outcome: { tevId: s.tevId, status: 'DONE', amountCents: '1000', feeCents: '50', reason: null, resolvedAt: expect.any(String) },
    });
    expect(await balances(w)).toEqual({ payer: 10_000n - 1_000n - SEND_FEE, payee: 1_000n - RECEIVE_FEE, revenue: SEND_FEE + RECEIVE_FEE });
    expect(await entriesOf(s.tevId)).toEqual([
      { account_id: w.revenueId, source: 'FEE_REVENUE', kind: 'FEE', amount: '70' },
      { account_id: w.payee.accountId, source: 'TEF_IN', kind: 'PRIMARY', amount: '1000' },
      { account_id: w.payee.accountId, source: 'TEF_IN', kind: 'FEE', amount: '-20' },
      { account_id: w.payer.accountId, source: 'TEF_OUT', kind: 'PRIMARY', amount: '-1000' },
      { account_id: w.payer.accountId, source: 'TEF_OUT', kind: 'FEE', amount: '-50' },
    ]);
    expect(await recordOf(s.tevId)).toEqual({ status: 'DONE', reason: null, fee_out: '50', fee_in: '20' });
    expect(await eventsOf(s.tevId)).toEqual(['tev.in.received', 'tev.out.succeeded']);
  });

  test('the destination named by branch and account number, leading zeros or not', async () => {
    const w = await world();
    const s = transfer(w, 300n, { destination: { branch: '1', account: `000${w.payee.number}` } });
    expect((await settle(s)).code).toBe('DONE');
    expect(await balances(w)).toEqual({ payer: 10_000n - 300n - SEND_FEE, payee: 300n - RECEIVE_FEE, revenue: SEND_FEE + RECEIVE_FEE });
  });

  test('a balance of exactly the amount plus the send fee is enough, and leaves zero', async () => {
    const w = await world();
    expect((await settle(transfer(w, 10_000n - SEND_FEE))).code).toBe('DONE');
    expect((await balances(w)).payer).toBe(0n);
  });
});

describe('a transfer recorded FAILED: nothing moves, the payer is told why', () => {
  test('a balance that covers the amount but not the send fee: INSUFFICIENT_BALANCE', async () => {
    const w = await world();
    const s = transfer(w, 10_000n);
    expect(await settle(s)).toEqual({
      code: 'FAILED',
      outcome: { tevId: s.tevId, status: 'FAILED', amountCents: '10000', feeCents: '0', reason: 'INSUFFICIENT_BALANCE', resolvedAt: expect.any(String) },
    });
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
    expect(await entriesOf(s.tevId)).toEqual([]);
    expect(await eventsOf(s.tevId)).toEqual(['tev.out.failed']);
  });

  test('above TEV_MAX_AMOUNT_CENTS: AMOUNT_ABOVE_LIMIT; not above the receive fee: AMOUNT_BELOW_RECEIVE_FEE', async () => {
    const w = await world();
    const above = await settle(transfer(w, 501n), 'SUBMIT', { TEV_MAX_AMOUNT_CENTS: 500n });
    expect(above).toMatchObject({ code: 'FAILED', outcome: { reason: 'AMOUNT_ABOVE_LIMIT' } });
    const below = await settle(transfer(w, RECEIVE_FEE));
    expect(below).toMatchObject({ code: 'FAILED', outcome: { reason: 'AMOUNT_BELOW_RECEIVE_FEE' } });
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
  });

  test('a payee that may not receive (blocked holder): DESTINATION_NOT_ACTIVE', async () => {
    const w = await world();
    await setBlocked(db.em(), w.tenantId, w.payee.document, true);
    const s = transfer(w, 1_000n);
    expect(await settle(s)).toMatchObject({ code: 'FAILED', outcome: { reason: 'DESTINATION_NOT_ACTIVE' } });
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
  });

  test('a payer blocked after its transfer was deferred: resolving it FAILS with SOURCE_NOT_ACTIVE', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    expect((await settle(s, 'DEFER')).code).toBe('PROCESSING');
    await setBlocked(db.em(), w.tenantId, w.payer.document, true);
    expect(await settle(s, 'RESOLVE')).toMatchObject({ code: 'FAILED', outcome: { reason: 'SOURCE_NOT_ACTIVE' } });
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
  });
});

describe('a request refused before it becomes a transfer: no record, nothing written', () => {
  async function expectRefused(w: World, s: TevSubmission, code: string, mode: SettleMode = 'SUBMIT') {
    const before = await tenantState(w.tenantId);
    const refused = await settle(s, mode);
    expect(refused.code).toBe(code);
    expect(refused).not.toHaveProperty('outcome');
    expect(await tenantState(w.tenantId)).toEqual(before);
    expect(await recordOf(s.tevId)).toBeUndefined();
  }

  test('SAME_ACCOUNT, DESTINATION_NOT_FOUND, SOURCE_NOT_FOUND', async () => {
    const w = await world();
    await expectRefused(w, transfer(w, 100n, { destination: { accountId: w.payer.accountId } }), 'SAME_ACCOUNT');
    const before = await tenantState(w.tenantId);
    expect(await settle(transfer(w, 100n, { destination: { branch: '0001', account: '999999999' } }))).toEqual({ code: 'DESTINATION_NOT_FOUND', destinationId: null });
    expect(await settle(transfer(w, 100n, { sourceAccountId: randomUUID() }))).toEqual({ code: 'SOURCE_NOT_FOUND', destinationId: null });
    expect(await tenantState(w.tenantId)).toEqual(before);
  });

  test.each(['BLOCKED', 'CLOSED'] as const)('a %s payer: HOLDER_BLOCKED', async (status) => {
    const w = await world();
    await db.em().nativeUpdate(Holder, { id: w.payer.holderId }, { status });
    await expectRefused(w, transfer(w, 100n), 'HOLDER_BLOCKED');
    await expectRefused(w, transfer(w, 100n), 'HOLDER_BLOCKED', 'DEFER');
  });

  test('a payer whose KYC is not finished: ONBOARDING_INCOMPLETE; an account not APPROVED: ACCOUNT_NOT_APPROVED', async () => {
    const w = await world();
    await db.em().nativeUpdate(Holder, { id: w.payer.holderId }, { status: 'PENDING', onboardingStep: 'IN_PROGRESS' });
    await expectRefused(w, transfer(w, 100n), 'ONBOARDING_INCOMPLETE');
    await db.em().nativeUpdate(Holder, { id: w.payer.holderId }, { status: 'ACTIVE', onboardingStep: 'DONE' });
    await db.em().nativeUpdate(Account, { id: w.payer.accountId }, { status: 'REJECTED' });
    await expectRefused(w, transfer(w, 100n), 'ACCOUNT_NOT_APPROVED');
  });

  test('an account under dual approval: APPROVAL_REQUIRED (the payment is held for its approver instead)', async () => {
    const w = await world();
    await db.em().nativeUpdate(Account, { id: w.payer.accountId }, { approverHolderId: w.payee.holderId });
    await expectRefused(w, transfer(w, 100n), 'APPROVAL_REQUIRED');
    await expectRefused(w, transfer(w, 100n), 'APPROVAL_REQUIRED', 'DEFER');
  });
});

describe('dual approval when resolving', () => {
  test('a transfer resolved after its outcome was unknown FAILS with APPROVAL_REQUIRED; the approval itself settles it', async () => {
    const w = await world();
    await db.em().nativeUpdate(Account, { id: w.payer.accountId }, { approverHolderId: w.payee.holderId });
    expect(await settle(transfer(w, 100n), 'RESOLVE')).toMatchObject({ code: 'FAILED', outcome: { reason: 'APPROVAL_REQUIRED' } });
    expect(await settle(transfer(w, 100n, { origin: 'APPROVAL' }), 'RESOLVE')).toMatchObject({ code: 'DONE' });
    expect(await balances(w)).toEqual({ payer: 10_000n - 100n - SEND_FEE, payee: 100n - RECEIVE_FEE, revenue: SEND_FEE + RECEIVE_FEE });
  });
});

describe('idempotency by tevId', () => {
  test('a repeat answers the stored outcome and moves nothing again', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    const first = await settle(s);
    expect(await settle(s)).toEqual(first);
    expect(await settle(s, 'RESOLVE')).toEqual(first);
    expect(await balances(w)).toEqual({ payer: 10_000n - 1_000n - SEND_FEE, payee: 1_000n - RECEIVE_FEE, revenue: SEND_FEE + RECEIVE_FEE });
    expect(await entriesOf(s.tevId)).toHaveLength(5);
  });

  test('a FAILED transfer stays FAILED when repeated, even once the balance would cover it', async () => {
    const w = await world();
    const s = transfer(w, 20_000n);
    const failed = await settle(s);
    expect(failed).toMatchObject({ code: 'FAILED', outcome: { reason: 'INSUFFICIENT_BALANCE' } });
    await fund(db.em(), w.tenantId, w.payer.accountId, 20_000n);
    expect(await settle(s)).toEqual(failed);
    expect(await balanceOf(w.payer.accountId)).toBe(30_000n);
  });

  test('the same tevId with another amount, or after the request became unsettleable: IDEMPOTENCY_KEY_REUSED, or the stored answer', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    const done = await settle(s);
    expect(await settle({ ...s, amountCents: '999' })).toEqual({ code: 'IDEMPOTENCY_KEY_REUSED', destinationId: w.payee.accountId });
    await setBlocked(db.em(), w.tenantId, w.payer.document, true);
    expect(await settle(s)).toEqual(done);
  });

  test('an externalRef already used by another transfer of the payer: EXTERNAL_REF_TAKEN', async () => {
    const w = await world();
    expect((await settle(transfer(w, 100n, { externalRef: 'invoice-7' }))).code).toBe('DONE');
    const again = transfer(w, 100n, { externalRef: 'invoice-7' });
    expect(await settle(again)).toEqual({ code: 'EXTERNAL_REF_TAKEN', destinationId: w.payee.accountId });
    expect(await recordOf(again.tevId)).toBeUndefined();
  });
});

describe('DEFER, then RESOLVE or FAIL', () => {
  test('DEFER records the transfer PROCESSING and moves nothing; RESOLVE settles it once; later calls read it', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    expect(await settle(s, 'DEFER')).toEqual({ code: 'PROCESSING', tevId: s.tevId });
    expect(await recordOf(s.tevId)).toMatchObject({ status: 'PROCESSING', reason: null });
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
    expect(await settle(s, 'DEFER')).toEqual({ code: 'PROCESSING', tevId: s.tevId });

    const resolved = await settle(s, 'RESOLVE');
    expect(resolved).toMatchObject({ code: 'DONE', outcome: { status: 'DONE', feeCents: '50' } });
    expect(await settle(s, 'RESOLVE')).toEqual(resolved);
    expect(await settle(s, 'DEFER')).toEqual(resolved);
    expect(await balances(w)).toEqual({ payer: 10_000n - 1_000n - SEND_FEE, payee: 1_000n - RECEIVE_FEE, revenue: SEND_FEE + RECEIVE_FEE });
    expect(await entriesOf(s.tevId)).toHaveLength(5);
  });

  test('a deferred transfer the balance no longer covers resolves FAILED with INSUFFICIENT_BALANCE', async () => {
    const w = await world();
    const s = transfer(w, 6_000n);
    expect((await settle(s, 'DEFER')).code).toBe('PROCESSING');
    expect((await settle(transfer(w, 6_000n))).code).toBe('DONE');
    expect(await settle(s, 'RESOLVE')).toMatchObject({ code: 'FAILED', outcome: { reason: 'INSUFFICIENT_BALANCE' } });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 6_000n - SEND_FEE);
  });

  test('FAIL resolves a deferred transfer FAILED with the given reason; nothing moves, and RESOLVE then reads FAILED', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    await settle(s, 'DEFER');
    const failed = await settleTev(db.em(), config, s, 'FAIL', { failReason: SANDBOX_FAILURE });
    expect(failed).toMatchObject({ code: 'FAILED', outcome: { status: 'FAILED', reason: SANDBOX_FAILURE, feeCents: '0' } });
    expect(await settle(s, 'RESOLVE')).toEqual(failed);
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
    expect(await eventsOf(s.tevId)).toEqual(['tev.out.failed']);
  });

  test('a mode settle_tev does not know (HOLD, as DEFER was called before) is refused, nothing written', async () => {
    const w = await world();
    const s = transfer(w, 1_000n);
    await expect(settle(s, 'HOLD' as SettleMode)).rejects.toThrow(/unknown mode HOLD/);
    expect(await recordOf(s.tevId)).toBeUndefined();
    expect(await balances(w)).toEqual({ payer: 10_000n, payee: 0n, revenue: 0n });
  });
});

describe('resolveTev, the resolution workflow step', () => {
  test('the sandbox ,98 fails the deferred transfer with SANDBOX_FAILURE; ,97 settles it', async () => {
    const w = await world();
    const failing = transfer(w, 1_098n);
    await settle(failing, 'DEFER');
    expect(await resolveTev(db.em(), config, { submission: failing, sandbox: { delayMs: 0, outcome: 'FAILED' } })).toMatchObject({ status: 'FAILED', reason: SANDBOX_FAILURE });
    const settling = transfer(w, 1_097n);
    await settle(settling, 'DEFER');
    expect(await resolveTev(db.em(), config, { submission: settling, sandbox: { delayMs: 0, outcome: 'DONE' } })).toMatchObject({ status: 'DONE', feeCents: '50' });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_097n - SEND_FEE);
  });

  test('a destination that no longer exists resolves FAILED with the refusal, without a record', async () => {
    const w = await world();
    const s = transfer(w, 100n, { destination: { branch: '0001', account: '999999999' } });
    expect(await resolveTev(db.em(), config, { submission: s, sandbox: null })).toMatchObject({ tevId: s.tevId, status: 'FAILED', reason: 'DESTINATION_NOT_FOUND', feeCents: '0' });
    expect(await recordOf(s.tevId)).toBeUndefined();
  });
});
