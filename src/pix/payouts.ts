import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { enqueueEvents, type EventType } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { feeRevenueAccountId, lockAccounts, postMovements, settlementAccountId, type MovementInput } from '../ledger/posting.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import { derivedId } from '../shared/ids.ts';
import type { WorkflowStart } from '../temporal/workflow-start.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { paymentDate } from '../shared/time.ts';
import type { PixKeyType } from './keys.ts';
import type { Beneficiary, ProviderPayoutState } from './provider.ts';
import type { PayoutOpening } from '../../workflows/contracts/pix-payout.ts';

export type PayoutChannel = 'PIX_OUT' | 'QR_CODE_OUT';
export type PayoutStatus = 'REQUESTED' | 'REJECTED' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

export interface PayoutRequest {
  tenantId: string;
  account: Account;
  channel: PayoutChannel;
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  beneficiary: Beneficiary;
  qr: { txid: string | null; merchantName: string; merchantCity: string } | null;
  description: string;
  idempotencyKey: string;
}

export interface PayoutRow {
  id: string;
  tenant_id: string;
  account_id: string;
  channel: PayoutChannel;
  amount_cents: string;
  fee_cents: string | null;
  pix_key: string;
  pix_key_type: PixKeyType;
  beneficiary: Beneficiary;
  description: string;
  request_hash: string;
  status: PayoutStatus;
  reason: string | null;
  movement_id: string | null;
  end_to_end_id: string | null;
  refunded_cents: string;
  created_at: string;
}


/** Like a tevId: derived from the account and the idempotency key, so a retried request names the same payout. */
export const payoutIdFor = (pepper: string, accountId: string, idempotencyKey: string): string =>
  derivedId(pepper, 'p', `pix:${accountId}:${idempotencyKey}`);

export const openingOf = (row: PayoutRow): PayoutOpening | null =>
  row.status === 'REQUESTED'
    ? null
    : {
        payoutId: row.id,
        status: row.status === 'REJECTED' ? 'REJECTED' : 'PROCESSING',
        amountCents: row.amount_cents,
        feeCents: row.fee_cents ?? '0',
        reason: row.reason,
        createdAt: new Date(row.created_at).toISOString(),
      };

/**
 * Records the payment request (idempotency: same key and body, same payout; another body, 409). With `handOff`, the
 * hand-off of its settlement workflow is recorded in the same transaction (a payout held for approval has none: its
 * approval workflow starts the settlement).
 */
export async function recordPayout(
  em: EntityManager,
  pepper: string,
  r: PayoutRequest,
  handOff?: { taskQueue: string; start: (payoutId: string) => WorkflowStart },
): Promise<{ payoutId: string; opening: PayoutOpening | null; handOff: HandOff | null }> {
  const payoutId = payoutIdFor(pepper, r.account.id, r.idempotencyKey);
  const hash = requestHash([r.channel, r.amountCents.toString(), r.pixKey, r.pixKeyType, r.qr?.txid ?? null, r.description]);
  return em.transactional(async (tx) => {
    const inserted = await tx.execute<{ id: string }[]>(
      `insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, pix_key, pix_key_type, beneficiary, qr, description, idempotency_key, request_hash, status)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, 'REQUESTED')
       on conflict do nothing returning id`,
      [payoutId, r.tenantId, r.account.id, r.channel, r.amountCents.toString(), r.pixKey, r.pixKeyType, JSON.stringify(r.beneficiary), r.qr ? JSON.stringify(r.qr) : null, r.description, r.idempotencyKey, hash],
    );
    const [row] = await tx.execute<PayoutRow[]>('select * from pix_payout where id = ?', [payoutId]);
    assertSameRequest(row!.request_hash, hash);
    const recorded = inserted.length > 0 && handOff ? await insertHandOff(tx, handOff.taskQueue, handOff.start(payoutId)) : null;
    return { payoutId, opening: openingOf(row!), handOff: recorded };
  });
}

async function lockPayout(em: EntityManager, payoutId: string): Promise<PayoutRow> {
  const [row] = await em.execute<PayoutRow[]>('select * from pix_payout where id = ? for update', [payoutId]);
  if (!row) throw new Error(`unknown payout ${payoutId}`);
  return row;
}

function payoutEvent(row: PayoutRow, account: { id: string; pixAccountId: string }, type: EventType, data: Record<string, unknown>) {
  return { tenantId: row.tenant_id, accountId: account.id, pixAccountId: account.pixAccountId, type, data };
}

/**
 * The debit, at once: amount and fee leave the balance (payout PROCESSING) in one transaction with the settlement
 * and fee revenue sides; refused (REJECTED) when the balance does not cover them. Runs again harmlessly.
 */
export async function openPayout(em: EntityManager, payoutId: string): Promise<PayoutOpening> {
  return em.transactional(async (tx) => {
    const row = await lockPayout(tx, payoutId);
    const opened = openingOf(row);
    if (opened) return opened;
    const fees = (await feesFor(tx, [row.account_id])).get(row.account_id)!;
    const fee = row.channel === 'QR_CODE_OUT' ? fees.qrOut : fees.pixOut;
    const settlementId = await settlementAccountId(tx, row.tenant_id);
    const revenueId = fee > 0n ? await feeRevenueAccountId(tx, row.tenant_id) : null;
    const locked = await lockAccounts(tx, [row.account_id, settlementId, ...(revenueId ? [revenueId] : [])]);
    const account = locked.get(row.account_id)!;
    const amount = BigInt(row.amount_cents);
    const reason = !account.mayMoveMoney ? 'SOURCE_NOT_ACTIVE' : account.balanceCents < amount + fee ? 'INSUFFICIENT_BALANCE' : null;
    if (reason) {
      const [rejected] = await tx.execute<PayoutRow[]>(`update pix_payout set status = 'REJECTED', reason = ?, fee_cents = ? where id = ? returning *`, [reason, fee.toString(), payoutId]);
      return openingOf(rejected!)!;
    }
    const b = row.beneficiary;
    const common = { tenantId: row.tenant_id, operationId: row.id, channel: 'PIX', externalRef: null, endToEndId: null, reversesMovementId: null } as const;
    const movements: MovementInput[] = [
      {
        ...common,
        accountId: account.id,
        source: row.channel,
        direction: 'DEBIT',
        status: 'PENDING',
        payoutStatus: 'PROCESSING',
        statusExternal: 'PROCESSING',
        amountCents: amount,
        feeCents: fee,
        description: row.description,
        metadata: {
          date: new Date().toISOString(),
          endToEndId: null,
          payer: { branch: account.agency, account: account.number },
          beneficiary: { ispb: b.ispb, name: b.name, branch: b.branch, account: b.account, document: b.document, pixKey: row.pix_key, pixKeyType: row.pix_key_type, institution: b.institution, accountType: b.accountType, branchDigit: null, accountModel: 'PIX' },
          pixAccountId: account.pixAccountId,
        },
        lines: [{ kind: 'PRIMARY', amountCents: -amount }, ...(fee > 0n ? [{ kind: 'FEE' as const, amountCents: -fee }] : [])],
      },
      { ...common, accountId: settlementId, source: 'SETTLEMENT', direction: 'CREDIT', status: 'PENDING', payoutStatus: null, statusExternal: 'PROCESSING', amountCents: amount, feeCents: 0n, description: `Pix out ${row.id}`, metadata: {}, lines: [{ kind: 'PRIMARY', amountCents: amount }] },
    ];
    if (revenueId) {
      movements.push({ ...common, accountId: revenueId, source: 'FEE_REVENUE', direction: 'CREDIT', status: 'DONE', payoutStatus: null, statusExternal: 'SUCCESS', amountCents: fee, feeCents: 0n, description: `Tarifa Pix ${row.id}`, metadata: {}, lines: [{ kind: 'FEE', amountCents: fee }] });
    }
    const [debit] = await postMovements(tx, locked, movements);
    const [opened2] = await tx.execute<PayoutRow[]>(`update pix_payout set status = 'PROCESSING', fee_cents = ?, movement_id = ? where id = ? returning *`, [fee.toString(), debit!.id, payoutId]);
    return openingOf(opened2!)!;
  });
}

/** The provider settled: POSTED, endToEndId and paymentDate filled, `pix.payout.succeeded`. */
export async function settlePayout(em: EntityManager, payoutId: string, state: Extract<ProviderPayoutState, { state: 'POSTED' }>): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await lockPayout(tx, payoutId);
    if (row.status !== 'PROCESSING') return;
    const settledAt = new Date(state.settledAt);
    await tx.execute(
      `update movement set payout_status = 'POSTED', status = 'DONE', status_external = 'SUCCESS', end_to_end_id = ?,
              metadata = metadata || jsonb_build_object('endToEndId', ?::text, 'paymentDate', ?::text)
        where id = ?`,
      [state.endToEndId, state.endToEndId, paymentDate(settledAt), row.movement_id],
    );
    await tx.execute(`update movement set status = 'DONE', status_external = 'SUCCESS', end_to_end_id = ? where operation_id = ? and source = 'SETTLEMENT'`, [state.endToEndId, row.id]);
    await tx.execute(`update pix_payout set status = 'POSTED', end_to_end_id = ?, settled_at = ? where id = ?`, [state.endToEndId, settledAt, payoutId]);
    const [account] = await tx.execute<{ id: string; pix_account_id: string; agency: string; number: string }[]>('select id, pix_account_id, agency, number from account where id = ?', [row.account_id]);
    const b = row.beneficiary;
    await enqueueEvents(tx, [
      payoutEvent(row, { id: account!.id, pixAccountId: account!.pix_account_id }, 'pix.payout.succeeded', {
        payoutId: row.id,
        endToEndId: state.endToEndId,
        movementId: row.movement_id,
        occurredAt: settledAt.toISOString(),
        amountCents: row.amount_cents,
        payerBranch: account!.agency,
        payerAccount: account!.number,
        beneficiaryName: b.name,
        beneficiaryBranch: b.branch,
        beneficiaryPixKey: row.pix_key,
        beneficiaryAccount: b.account,
        beneficiaryDocument: b.document,
        beneficiaryPixKeyType: row.pix_key_type,
        beneficiaryAccountType: b.accountType ?? null,
        beneficiaryInstitution: b.institution,
      }),
    ]);
  });
}

/**
 * Money back to the holder as REVERSAL entries on a movement that reverses the debit: the whole amount and fee when
 * the payout failed or was cancelled, or the refunded amount after settlement.
 */
async function postReturn(tx: EntityManager, row: PayoutRow, amount: bigint, fee: bigint, description: string, endToEndId: string | null) {
  const settlementId = await settlementAccountId(tx, row.tenant_id);
  const revenueId = fee > 0n ? await feeRevenueAccountId(tx, row.tenant_id) : null;
  const locked = await lockAccounts(tx, [row.account_id, settlementId, ...(revenueId ? [revenueId] : [])]);
  const common = { tenantId: row.tenant_id, channel: 'PIX', status: 'DONE', payoutStatus: null, statusExternal: 'SUCCESS', externalRef: null, endToEndId, reversesMovementId: row.movement_id, feeCents: 0n, metadata: {} } as const;
  const operationId = `${row.id}:${endToEndId ?? 'reversal'}`;
  const movements: MovementInput[] = [
    {
      ...common,
      operationId,
      accountId: row.account_id,
      source: 'REVERSAL',
      direction: 'CREDIT',
      amountCents: amount + fee,
      description,
      metadata: { date: new Date().toISOString(), endToEndId, reversesMovementId: row.movement_id },
      lines: [{ kind: 'REVERSAL', amountCents: amount }, ...(fee > 0n ? [{ kind: 'REVERSAL' as const, amountCents: fee }] : [])],
    },
    { ...common, operationId, accountId: settlementId, source: 'SETTLEMENT', direction: 'DEBIT', amountCents: amount, description, lines: [{ kind: 'REVERSAL', amountCents: -amount }] },
  ];
  if (revenueId) movements.push({ ...common, operationId, accountId: revenueId, source: 'FEE_REVENUE', direction: 'DEBIT', amountCents: fee, description, lines: [{ kind: 'REVERSAL', amountCents: -fee }] });
  const [credit] = await postMovements(tx, locked, movements);
  return { credit: credit!, account: locked.get(row.account_id)! };
}

/** The provider failed or cancelled it: amount and fee return, the debit is marked, `pix.payout.failed|cancelled`. */
export async function reversePayout(em: EntityManager, payoutId: string, state: Extract<ProviderPayoutState, { state: 'FAILED' | 'CANCELLED' }>): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await lockPayout(tx, payoutId);
    if (row.status !== 'PROCESSING') return;
    const { account } = await postReturn(tx, row, BigInt(row.amount_cents), BigInt(row.fee_cents ?? '0'), `Estorno: ${state.reason}`, null);
    await tx.execute(`update movement set payout_status = ?, status = 'FAILED', status_external = 'FAILURE' where id = ?`, [state.state, row.movement_id]);
    await tx.execute(`update movement set status = 'FAILED', status_external = 'FAILURE' where operation_id = ? and source = 'SETTLEMENT'`, [row.id]);
    await tx.execute('update pix_payout set status = ?, reason = ? where id = ?', [state.state, state.reason, payoutId]);
    const type = state.state === 'FAILED' ? 'pix.payout.failed' : 'pix.payout.cancelled';
    await enqueueEvents(tx, [
      payoutEvent(row, account, type, { payoutId: row.id, movementId: row.movement_id, endToEndId: state.endToEndId, amountCents: row.amount_cents, occurredAt: new Date().toISOString(), reason: state.reason }),
    ]);
  });
}

/** A settled payout returned by the beneficiary, partially or totally: the returned amount is credited, REFUNDED. */
export async function refundPayout(em: EntityManager, payoutId: string, refund: { endToEndId: string; amountCents: string; refundedAt: string }): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await lockPayout(tx, payoutId);
    if (row.status !== 'POSTED') return;
    const amount = BigInt(refund.amountCents);
    if (amount <= 0n || amount > BigInt(row.amount_cents)) throw new Error(`refund of ${amount} does not fit payout ${payoutId}`);
    const { credit, account } = await postReturn(tx, row, amount, 0n, 'Devolução de Pix enviado', refund.endToEndId);
    await tx.execute(`update movement set payout_status = 'REFUNDED' where id = ?`, [row.movement_id]);
    await tx.execute(`update pix_payout set status = 'REFUNDED', refunded_cents = ? where id = ?`, [amount.toString(), payoutId]);
    await enqueueEvents(tx, [
      payoutEvent(row, account, 'pix.payout.refunded', {
        payoutId: row.id,
        movementId: credit.id,
        endToEndId: row.end_to_end_id,
        amountCents: row.amount_cents,
        occurredAt: new Date(refund.refundedAt).toISOString(),
        refundEndToEndId: refund.endToEndId,
        refundAmountCents: amount.toString(),
      }),
    ]);
  });
}
