/**
 * A batch payout's execution, the steps of its workflow (`payment-batch-<batchId>`) and of the use cases that change
 * it: its start (approval, funds), the payment of its items chunk by chunk through the posting functions of an
 * immediate payment, and its end with `payment.batch.finished`. Each step reads where the batch stands under its row's
 * lock and changes it in one transaction, so a step retried or replayed pays nothing twice.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { insertHandOffs } from '../handoff/store.ts';
import { APPLICATION_NAMES } from '../persistence/orm.ts';
import { callDebitBatch, type DebitRequest, type DebitRow } from '../pix/payout-debits.ts';
import { payoutIdFor, payoutRequestHash, payoutTiming } from '../pix/payouts.ts';
import { tevIdFor } from '../transfers/service.ts';
import { settleTevBatch, type Settlement } from '../transfers/settlement.ts';
import { pixPayoutStart } from '../../workflows/contracts/pix-payout.ts';
import { paymentBatchWake, type BatchFinalStatus, type BatchProgress, type BatchStart } from '../../workflows/contracts/payment-batch.ts';
import {
  cancelPendingItems,
  countItems,
  lockBatch,
  hasPending,
  lockPendingItems,
  markBatch,
  pendingTotals,
  processingCount,
  recentPostingsOf,
  recordItemOutcomes,
  syncPixItems,
  type BatchItem,
  type BatchItemStatus,
  type PaymentBatch,
} from './store.ts';

export type ExecutionConfig = Pick<
  Config,
  | 'KEY_PEPPER'
  | 'TEV_MAX_AMOUNT_CENTS'
  | 'TEMPORAL_TASK_QUEUE'
  | 'PIX_NOTIFICATION_WAIT_MS'
  | 'PIX_QUERY_MAX_WAIT_MS'
  | 'BATCH_CHUNK_SIZE'
  | 'BATCH_PIX_IN_FLIGHT'
  | 'BATCH_YIELD_CHUNK'
  | 'BATCH_YIELD_PIX_IN_FLIGHT'
  | 'BATCH_YIELD_MS'
>;

/** A Pix item's description when the integrator gave none, as a Pix payment's. */
export const DEFAULT_PIX_DESCRIPTION = 'Pix enviado';

/** Every retry of a batch names the same payment for each item: the batch and the item's externalRef. */
export const itemIdempotencyKey = (batchId: string, externalRef: string) => `batch:${batchId}:${externalRef}`;

/** The transfer's or the payout's id of an item, from the account and its idempotency key, as an immediate payment's. */
export function itemPayoutId(pepper: string, accountId: string, batchId: string, item: { kind: 'PIX' | 'TEV'; externalRef: string }): string {
  const key = itemIdempotencyKey(batchId, item.externalRef);
  return item.kind === 'TEV' ? tevIdFor(pepper, accountId, key) : payoutIdFor(pepper, accountId, key);
}

/** How long after its approval's deadline a held batch looks at how the approval ended (its run closes it first). */
const APPROVAL_GRACE_MS = 5_000;

/** Why a batch ended without paying its items, by how its approval ended. */
const APPROVAL_ENDS: Partial<Record<string, string>> = { REJECTED: 'APPROVAL_REJECTED', EXPIRED: 'APPROVAL_EXPIRED' };

/**
 * The batch's start, once: PAY when it may be paid (PENDING, its total with fees available: PROCESSING from now), WAIT
 * while it is held for an approval not decided, CLOSED when it ended or ends here (its approval rejected, expired or
 * cancelled; its funds not available: REFUSED). A batch already started answers PAY again.
 */
export async function startBatch(em: EntityManager, batchId: string): Promise<BatchStart> {
  return em.transactional(async (tx) => {
    const batch = (await lockBatch(tx, batchId))!;
    switch (batch.status) {
      case 'PROCESSING':
        return { kind: 'PAY' };
      case 'AWAITING_APPROVAL': {
        const approval = batch.approval!;
        if (approval.status === 'PENDING' || approval.status === 'APPROVED') {
          const until = Math.max(Date.parse(approval.expiresAt), Date.now()) + APPROVAL_GRACE_MS;
          return { kind: 'WAIT', until: new Date(until).toISOString() };
        }
        const reason = APPROVAL_ENDS[approval.status] ?? approval.reason ?? approval.status;
        return { kind: 'CLOSED', status: await closeBatch(tx, batch, 'REJECTED', reason) };
      }
      case 'PENDING': {
        if (!(await fundsCover(tx, batch))) return { kind: 'CLOSED', status: await closeBatch(tx, batch, 'REFUSED', 'INSUFFICIENT_BALANCE') };
        await markBatch(tx, batch.id, 'PROCESSING', { started: true });
        return { kind: 'PAY' };
      }
      default:
        return { kind: 'CLOSED', status: batch.status };
    }
  });
}

/** What a batch's items still to pay come to with their fees, against the account's balance now. */
export async function batchCost(em: EntityManager, accountId: string, totals: { kind: 'PIX' | 'TEV'; count: number; amountCents: bigint }[]) {
  const fees = (await feesFor(em, [accountId])).get(accountId)!;
  const totalCents = totals.reduce((sum, t) => sum + t.amountCents, 0n);
  const feeCents = totals.reduce((sum, t) => sum + BigInt(t.count) * (t.kind === 'TEV' ? fees.tevOut : fees.pixOut), 0n);
  return { totalCents, feeCents };
}

async function fundsCover(em: EntityManager, batch: PaymentBatch): Promise<boolean> {
  const { totalCents, feeCents } = await batchCost(em, batch.accountId, await pendingTotals(em, batch.id));
  const account = await em.findOneOrFail(Account, { id: batch.accountId }, { refresh: true });
  return account.balanceCents >= totalCents + feeCents;
}

/**
 * The batch ends without paying what is left (cancelled, rejected, refused): its items not paid yet are CANCELLED
 * with `reason`, and its end is recorded with `payment.batch.finished`, in the caller's transaction (its row locked).
 */
export async function closeBatch(em: EntityManager, batch: PaymentBatch, status: Exclude<BatchFinalStatus, 'FINISHED'>, reason: string): Promise<BatchFinalStatus> {
  await cancelPendingItems(em, batch.id, reason);
  await markBatch(em, batch.id, status, { reason, cancelled: status === 'CANCELLED' });
  await announceEnd(em, batch, status, reason);
  return status;
}

/** `payment.batch.finished`, with the batch's counts as it ends. */
async function announceEnd(em: EntityManager, batch: PaymentBatch, status: BatchFinalStatus, reason: string | null): Promise<void> {
  const account = await em.findOneOrFail(Account, { id: batch.accountId });
  const { byStatus, paidCents } = await countItems(em, batch.id);
  await enqueueEvents(em, [
    {
      tenantId: batch.tenantId,
      accountId: account.id,
      pixAccountId: account.pixAccountId,
      type: 'payment.batch.finished',
      data: { batchId: batch.id, status, reason, counts: countsView(byStatus, batch.itemCount), paidCents: paidCents.toString(), occurredAt: new Date().toISOString() },
    },
  ]);
}

/** The items by state, as the API and the event name them. */
export const countsView = (byStatus: Record<BatchItemStatus, number>, total: number) => ({
  total,
  invalid: byStatus.INVALID,
  pending: byStatus.PENDING,
  processing: byStatus.PROCESSING,
  paid: byStatus.PAID,
  failed: byStatus.FAILED,
  cancelled: byStatus.CANCELLED,
});

/**
 * One step of a started batch: the Pix the provider has answered for are brought up to date; then the next
 * `chunkSize` TEV items settle in one transaction, and the next Pix items (as many as keep `pixInFlight` of them
 * debited and not final) are debited in another, their settlement workflows handed off with them. While the api's
 * request path is posting, the step gives way (`yieldsTo`). When nothing is left to pay or to settle, the batch is
 * FINISHED with its event.
 */
export async function payNextChunk(em: EntityManager, config: ExecutionConfig, batchId: string, chunkSize: number, pixInFlight: number): Promise<BatchProgress> {
  await syncPixItems(em, batchId);
  let paid = 0;
  if (await hasPending(em, batchId)) {
    const yielding = await yieldsTo(em, config);
    const size = yielding ? Math.min(chunkSize, config.BATCH_YIELD_CHUNK) : chunkSize;
    const inFlight = yielding ? Math.min(pixInFlight, config.BATCH_YIELD_PIX_IN_FLIGHT) : pixInFlight;
    paid += await payChunk(em, config, batchId, 'TEV', size);
    const room = Math.min(size, inFlight - (await processingCount(em, batchId)));
    if (room > 0) paid += await payChunk(em, config, batchId, 'PIX', room);
    if (yielding && paid > 0) await sleep(config.BATCH_YIELD_MS);
  }
  const processing = await processingCount(em, batchId);
  if (processing === 0 && !(await hasPending(em, batchId))) return { paid, processing, finished: await finishBatch(em, batchId) };
  return { paid, processing, finished: null };
}

/**
 * Whether a step gives way to the holders' requests: the api posted a TEV or a Pix debit within the last
 * `BATCH_YIELD_MS`. The two share PostgreSQL's cores; a step of 100 TEVs is tens of milliseconds of one of them, which a
 * request arriving then waits behind (the unrelated TEVs' p99 rose 2.9× during a 5,000-item batch); a Pix item's
 * settlement is a workflow, a provider call and a notification, on the cores the api shares. So while the request
 * path is busy, the batch pays in small steps with pauses between them and few Pix in flight, and at full speed when
 * it is alone.
 */
async function yieldsTo(em: EntityManager, config: ExecutionConfig): Promise<boolean> {
  return (await recentPostingsOf(em, APPLICATION_NAMES.api, Math.max(config.BATCH_YIELD_MS, 1))) > 0;
}

/** Pays the next `limit` PENDING items of one kind of the batch in one transaction; the number paid (or refused). */
async function payChunk(em: EntityManager, config: ExecutionConfig, batchId: string, kind: 'PIX' | 'TEV', limit: number): Promise<number> {
  return em.transactional(async (tx) => {
    const batch = (await lockBatch(tx, batchId))!;
    // Cancelled meanwhile: its items are no longer PENDING. Ended: nothing is paid after its end.
    if (batch.status !== 'PROCESSING') return 0;
    const items = await lockPendingItems(tx, batchId, kind, limit);
    if (items.length === 0) return 0;
    const outcomes = kind === 'TEV' ? await settleTevItems(tx, config, batch, items) : await debitPixItems(tx, config, batch, items);
    await recordItemOutcomes(tx, batchId, outcomes);
    return items.length;
  });
}

type ItemOutcome = { ord: number; status: BatchItemStatus; reason: string | null };

/** TEV items through `settle_tev_batch`, as requests of the integrator's API would settle; each its own transfer and events. */
async function settleTevItems(em: EntityManager, config: ExecutionConfig, batch: PaymentBatch, items: BatchItem[]): Promise<ItemOutcome[]> {
  const settled = await settleTevBatch(
    em,
    config,
    items.map((item) => ({
      tevId: item.payoutId!,
      tenantId: batch.tenantId,
      sourceAccountId: batch.accountId,
      destination: { accountId: item.destinationAccountId! },
      amountCents: item.amountCents.toString(),
      description: item.description,
      externalRef: null,
      endToEndId: randomUUID(),
      idempotencyKey: itemIdempotencyKey(batch.id, item.externalRef),
      origin: 'BATCH',
    })),
  );
  return items.map((item, i) => ({ ord: item.ord, ...tevItemOutcome(settled[i]!) }));
}

function tevItemOutcome(settled: Settlement): Omit<ItemOutcome, 'ord'> {
  if (settled.code === 'DONE') return { status: 'PAID', reason: null };
  if (settled.code === 'FAILED') return { status: 'FAILED', reason: settled.outcome.reason };
  // A refusal of the request itself (its source blocked meanwhile): nothing was recorded.
  if (settled.code !== 'PROCESSING') return { status: 'FAILED', reason: settled.code };
  throw new Error(`settle_tev left a batch's TEV ${settled.tevId} PROCESSING`);
}

/**
 * Pix items through `debit_pix_payout_batch`, as the request path debits a payment by key: each its own payout,
 * debited with its settlement workflow's hand-off (due at once, started by the worker's reconciler). An account under
 * dual approval had the batch approved as a whole before it started (its TEVs go with origin `BATCH`).
 */
async function debitPixItems(em: EntityManager, config: ExecutionConfig, batch: PaymentBatch, items: BatchItem[]): Promise<ItemOutcome[]> {
  const requests: DebitRequest[] = items.map((item) => {
    const description = item.description ?? DEFAULT_PIX_DESCRIPTION;
    const payment = { channel: 'PIX_OUT' as const, amountCents: item.amountCents, pixKey: item.pixKey!, pixKeyType: item.pixKeyType!, qr: null, description };
    return {
      debit: {
        ...payment,
        payoutId: item.payoutId!,
        tenantId: batch.tenantId,
        accountId: batch.accountId,
        amountCents: item.amountCents.toString(),
        beneficiary: item.beneficiary!,
        idempotencyKey: itemIdempotencyKey(batch.id, item.externalRef),
        requestHash: payoutRequestHash(payment),
      },
      approval: 'GRANTED',
      handOff: {
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        start: pixPayoutStart({ payoutId: item.payoutId!, tenantId: batch.tenantId, accountId: batch.accountId, timing: payoutTiming(config) }),
      },
    };
  });
  const rows = await callDebitBatch(em, requests);
  return items.map((item, i) => ({ ord: item.ord, ...pixItemOutcome(rows[i]!) }));
}

function pixItemOutcome(row: DebitRow): Omit<ItemOutcome, 'ord'> {
  switch (row.status) {
    case 'PROCESSING':
    case 'REQUESTED':
      return { status: 'PROCESSING', reason: null };
    case 'POSTED':
    case 'REFUNDED':
      return { status: 'PAID', reason: null };
    case 'REJECTED':
    case 'FAILED':
    case 'CANCELLED':
      return { status: 'FAILED', reason: row.reason ?? row.status };
    default:
      // A refusal of the request itself (SOURCE_NOT_FOUND): nothing was recorded.
      return { status: 'FAILED', reason: row.code };
  }
}

/** The batch's end once nothing is left to pay or to settle: FINISHED with its event, once. */
async function finishBatch(em: EntityManager, batchId: string): Promise<BatchFinalStatus> {
  return em.transactional(async (tx) => {
    const batch = (await lockBatch(tx, batchId))!;
    if (batch.status !== 'PROCESSING') return batch.status as BatchFinalStatus;
    await markBatch(tx, batchId, 'FINISHED');
    await announceEnd(tx, batch, 'FINISHED', null);
    return 'FINISHED';
  });
}

/** What waking a batch's run needs: the batch, and the steps' sizes (a run the wake starts takes them). */
const runOf = (config: ExecutionConfig, batch: Pick<PaymentBatch, 'id' | 'tenantId' | 'accountId'>) => ({
  batchId: batch.id,
  tenantId: batch.tenantId,
  accountId: batch.accountId,
  chunkSize: config.BATCH_CHUNK_SIZE,
  pixInFlight: config.BATCH_PIX_IN_FLIGHT,
});

/** The batch's run is woken (due at once, started by the worker's reconciler), in the caller's transaction. */
export async function wakeBatch(em: EntityManager, config: ExecutionConfig, batch: Pick<PaymentBatch, 'id' | 'tenantId' | 'accountId'>): Promise<void> {
  await insertHandOffs(em, config.TEMPORAL_TASK_QUEUE, [paymentBatchWake(runOf(config, batch))], { dueNow: true });
}

/**
 * The approver approved the batch (the approval's step, in its transaction): it may start, and its run is woken.
 * False when it no longer waits (cancelled meanwhile).
 */
export async function releaseApprovedBatch(em: EntityManager, config: ExecutionConfig, batchId: string): Promise<boolean> {
  const batch = (await lockBatch(em, batchId))!;
  if (batch.status !== 'AWAITING_APPROVAL') return batch.status === 'PENDING' || batch.status === 'PROCESSING';
  await markBatch(em, batchId, 'PENDING');
  await wakeBatch(em, config, batch);
  return true;
}
