/**
 * Batch payouts ("pagamento em lote") of the integration API: a batch is received (validated, its funds checked, held
 * for the account's approver under dual approval, recorded with its workflow's hand-off), read with its counts, its
 * items listed, and cancelled. Its execution is `execution.ts`, the steps of its workflow.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import { recordHold, withdrawApproval } from '../approvals/service.ts';
import { BATCH_CANCELLED } from '../approvals/store.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import type { PlatformContext } from '../platform-context.ts';
import type { PixProvider } from '../pix/provider.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import { paymentBatchStart } from '../../workflows/contracts/payment-batch.ts';
import { batchCost, closeBatch, countsView, DEFAULT_PIX_DESCRIPTION, wakeBatch, type ExecutionConfig } from './execution.ts';
import { allItems, cancelPendingItems, countItems, findBatchByKey, findBatchOfAccount, insertBatch, insertItems, listItems, lockBatch, markBatch, setBatchApproval, type BatchItem, type BatchItemStatus, type PaymentBatch } from './store.ts';
import { validateItems, type BatchItemRequest } from './validation.ts';

/** What the batch use cases use besides the platform: the Pix provider, whose directory resolves the keys. */
export interface BatchContext extends PlatformContext {
  pixProvider: PixProvider;
}

/** The most items one batch takes (as Transfeera's). */
export const MAX_BATCH_ITEMS = 5_000;

/** What a held batch asks its approver: the batch, what its valid items send, and how many they are. */
export interface HeldBatch {
  kind: 'BATCH';
  batchId: string;
  amountCents: string;
  itemCount: number;
}

export interface BatchRequest {
  account: Account;
  idempotencyKey: string;
  items: BatchItemRequest[];
}

/** What an integrator reads of a batch. */
export async function batchView(em: EntityManager, batch: PaymentBatch, pixAccountId: string) {
  const { byStatus, amountCents, paidCents } = await countItems(em, batch.id);
  return {
    batchId: batch.id,
    pixAccountId,
    status: batch.status,
    reason: batch.reason,
    approvalRequestId: batch.approvalRequestId,
    counts: countsView(byStatus, batch.itemCount),
    amountCents: amountCents.toString(),
    paidCents: paidCents.toString(),
    createdAt: batch.createdAt,
    startedAt: batch.startedAt,
    cancelledAt: batch.cancelledAt,
    finishedAt: batch.finishedAt,
  };
}

/** What an integrator reads of an item: what was asked, whom it pays, where it stands. */
export function itemView(item: BatchItem) {
  return {
    index: item.ord,
    externalRef: item.externalRef,
    kind: item.kind,
    amountCents: item.amountCents.toString(),
    description: item.kind === 'PIX' ? (item.description ?? DEFAULT_PIX_DESCRIPTION) : item.description,
    destination:
      item.kind === 'PIX'
        ? { pixKey: item.pixKey!, pixKeyType: item.pixKeyType!, name: item.beneficiary?.name ?? null }
        : { branch: item.branch!, account: item.accountNumber! },
    payoutId: item.payoutId,
    status: item.status,
    reason: item.reason,
  };
}

/** What a request asks for, as sent: the same Idempotency-Key with another batch is 409. */
const batchRequestHash = (items: BatchItemRequest[]) =>
  requestHash(items.map((i) => [i.externalRef, i.kind, i.amountCents.toString(), i.description, ...(i.kind === 'PIX' ? [i.pixKeyType, i.pixKey] : [i.branch, i.account])]));

/**
 * Receives a batch: every item validated first (the keys through the provider, the accounts in the tenant), then the
 * valid items' total with their fees checked against the balance (refused whole, 422, nothing recorded), then the
 * batch recorded with its items, its approval request when the account is under dual approval, and its workflow's
 * hand-off, in one transaction; the hand-offs are carried out once it committed. The same Idempotency-Key answers the
 * batch it created (another body is 409).
 */
export async function createBatch(ctx: BatchContext, request: BatchRequest) {
  const { orm, config, temporal } = ctx;
  const em = orm.em.fork();
  const { batchId, items, handOffs } = await recordBatch(em, config, ctx.pixProvider, request);
  await Promise.all(handOffs.map((handOff) => dispatchHandOff(temporal.client, orm.em.fork(), handOff)));
  const batch = (await findBatchOfAccount(em, request.account.tenantId, request.account.id, batchId))!;
  return { ...(await batchView(em, batch, request.account.pixAccountId)), items: items.map(validationView) };
}

/** `createBatch`'s records: the batch (or the one of this Idempotency-Key), its items as validated, and the hand-offs to carry out. */
export async function recordBatch(
  em: EntityManager,
  config: Pick<Config, 'KEY_PEPPER' | 'TEV_MAX_AMOUNT_CENTS' | 'APPROVAL_TTL_MS' | 'TEMPORAL_TASK_QUEUE' | 'BATCH_CHUNK_SIZE' | 'BATCH_PIX_IN_FLIGHT'>,
  provider: Pick<PixProvider, 'resolveKey'>,
  { account, idempotencyKey, items: requested }: BatchRequest,
): Promise<{ batchId: string; items: Omit<BatchItem, 'batchId'>[]; handOffs: HandOff[] }> {
  const hash = batchRequestHash(requested);
  const existing = await findBatchByKey(em, account.id, idempotencyKey);
  if (existing) return sameBatch(em, existing, hash);

  const batchId = newCuid();
  const items = await validateItems(em, provider, config, account, batchId, requested);
  const valid = items.filter((i) => i.status === 'PENDING');
  const totals = (['PIX', 'TEV'] as const).map((kind) => {
    const ofKind = valid.filter((i) => i.kind === kind);
    return { kind, count: ofKind.length, amountCents: ofKind.reduce((sum, i) => sum + i.amountCents, 0n) };
  });
  const { totalCents, feeCents } = await batchCost(em, account.id, totals);
  if (account.balanceCents < totalCents + feeCents) throw new DomainError('BATCH_NOT_COVERED', { totalCents, feeCents, balanceCents: account.balanceCents });

  const handOffs = await em.transactional(async (tx) => {
    const held = account.approverHolderId !== null;
    const created = await insertBatch(tx, {
      id: batchId,
      tenantId: account.tenantId,
      accountId: account.id,
      idempotencyKey,
      requestHash: hash,
      status: held ? 'AWAITING_APPROVAL' : 'PENDING',
      approvalRequestId: null,
      itemCount: items.length,
    });
    // A concurrent request with the same key won the insert: answer as its retry.
    if (!created) return null;
    await insertItems(tx, items, batchId);
    const recorded: HandOff[] = [];
    if (held) {
      const payment: HeldBatch = { kind: 'BATCH', batchId, amountCents: totalCents.toString(), itemCount: valid.length };
      const hold = await recordHold(tx, config, { tenantId: account.tenantId, source: account, requesterHolderId: account.holderId!, idempotencyKey: `batch:${batchId}`, payment });
      await setBatchApproval(tx, batchId, hold.request.id);
      // Dual approval turned off since the account was read: the request is born cancelled, the batch may start.
      if (hold.request.status === 'CANCELLED') await markBatch(tx, batchId, 'PENDING');
      if (hold.handOff) recorded.push(hold.handOff);
    }
    const run = { batchId, tenantId: account.tenantId, accountId: account.id, chunkSize: config.BATCH_CHUNK_SIZE, pixInFlight: config.BATCH_PIX_IN_FLIGHT };
    recorded.push(await insertHandOff(tx, config.TEMPORAL_TASK_QUEUE, paymentBatchStart(run)));
    return recorded;
  });
  if (!handOffs) return sameBatch(em, (await findBatchByKey(em, account.id, idempotencyKey))!, hash);
  return { batchId, items, handOffs };
}
recordBatch.raises = refusals(validateItems, 'BATCH_NOT_COVERED', 'IDEMPOTENCY_KEY_REUSED');
createBatch.raises = recordBatch.raises;

/** An item's validation, as the batch's creation answers it. */
const validationView = (item: Pick<BatchItem, 'ord' | 'externalRef' | 'kind' | 'payoutId' | 'status' | 'reason'>) => ({
  index: item.ord,
  externalRef: item.externalRef,
  kind: item.kind,
  valid: item.status !== 'INVALID',
  payoutId: item.payoutId,
  reason: item.status === 'INVALID' ? item.reason : null,
});

/** The batch of a retried request: the same body, or 409. */
async function sameBatch(em: EntityManager, batch: PaymentBatch, hash: string) {
  assertSameRequest(batch.requestHash, hash);
  return { batchId: batch.id, items: await allItems(em, batch.id), handOffs: [] };
}

/** A batch of the account. */
export async function batchOfAccount(em: EntityManager, account: Pick<Account, 'id' | 'tenantId'>, batchId: string): Promise<PaymentBatch> {
  const batch = await findBatchOfAccount(em, account.tenantId, account.id, batchId);
  if (!batch) throw notFound('Batch');
  return batch;
}
batchOfAccount.raises = refusals('NOT_FOUND');

export async function readBatch(em: EntityManager, account: Pick<Account, 'id' | 'tenantId' | 'pixAccountId'>, batchId: string) {
  return batchView(em, await batchOfAccount(em, account, batchId), account.pixAccountId);
}
readBatch.raises = refusals(batchOfAccount);

/** The batch's items in request order, a page at a time (the cursor is signed for this batch and status). */
export async function listBatchItems(
  em: EntityManager,
  cursorKey: string,
  account: Pick<Account, 'id' | 'tenantId'>,
  batchId: string,
  status: BatchItemStatus | undefined,
  limit: number,
  cursor: string | undefined,
) {
  const batch = await batchOfAccount(em, account, batchId);
  const scope = `batch-items:${batch.id}:${status ?? ''}`;
  const after = cursor === undefined ? null : Number(decodeCursor(cursorKey, scope, cursor).id);
  const rows = await listItems(em, batch.id, status, after, limit + 1);
  // The position is the item's index; the batch's creation time keeps the cursor's form of every listing.
  const { items, pagination } = pageOf(
    rows.map((item) => ({ item, id: String(item.ord), position: batch.position })),
    limit,
    cursorKey,
    scope,
  );
  return { items: items.map(({ item }) => itemView(item)), pagination };
}
listBatchItems.raises = refusals(batchOfAccount);

/**
 * Cancels what is left of a batch. Before it started (held for approval, or waiting to start): the whole batch is
 * CANCELLED with its event, its approval request withdrawn. Once started: its items not paid yet are CANCELLED, and
 * the batch ends FINISHED once those already paid settle. Cancelling again answers the batch as it stands; a batch
 * that ended otherwise is 409. Its run is woken to see the change.
 */
export async function cancelBatch(ctx: PlatformContext, account: Pick<Account, 'id' | 'tenantId' | 'pixAccountId'>, batchId: string) {
  const { orm, config, temporal } = ctx;
  const em = orm.em.fork();
  const handOffs = await recordCancellation(em, config, account, batchId);
  await Promise.all(handOffs.map((handOff) => dispatchHandOff(temporal.client, orm.em.fork(), handOff)));
  return readBatch(em, account, batchId);
}

/** `cancelBatch`'s change, in one transaction under the batch's lock: the hand-offs to carry out once it committed. */
export async function recordCancellation(em: EntityManager, config: ExecutionConfig, account: Pick<Account, 'id' | 'tenantId'>, batchId: string): Promise<HandOff[]> {
  await batchOfAccount(em, account, batchId);
  return em.transactional(async (tx) => {
    const batch = (await lockBatch(tx, batchId))!;
    // Cancelled already (before it started, or its items since): a retry of the cancellation.
    if (batch.cancelledAt) return [];
    if (batch.status !== 'AWAITING_APPROVAL' && batch.status !== 'PENDING' && batch.status !== 'PROCESSING') throw new DomainError('BATCH_FINISHED', { status: batch.status });
    const withdrawn = batch.status === 'AWAITING_APPROVAL' && batch.approvalRequestId ? await withdrawApproval(tx, config.TEMPORAL_TASK_QUEUE, batch.approvalRequestId, BATCH_CANCELLED) : null;
    if (batch.status === 'PROCESSING') {
      await cancelPendingItems(tx, batch.id, 'CANCELLED');
      await markBatch(tx, batch.id, 'PROCESSING', { cancelled: true });
    } else {
      await closeBatch(tx, batch, 'CANCELLED', 'CANCELLED');
    }
    await wakeBatch(tx, config, batch);
    return withdrawn ? [withdrawn] : [];
  });
}
recordCancellation.raises = refusals(batchOfAccount, 'BATCH_FINISHED');
cancelBatch.raises = recordCancellation.raises;
