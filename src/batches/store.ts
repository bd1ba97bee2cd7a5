/** The SQL of `payment_batch` and `payment_batch_item`, one row type and one mapper per table. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PixKeyType } from '../pix/keys.ts';
import type { Beneficiary } from '../pix/provider.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { ApprovalStatus } from '../../workflows/contracts/approval.ts';
import type { BatchFinalStatus, BatchStatus } from '../../workflows/contracts/payment-batch.ts';

export type BatchItemStatus = 'INVALID' | 'PENDING' | 'PROCESSING' | 'PAID' | 'FAILED' | 'CANCELLED';
export const BATCH_ITEM_STATUSES: readonly BatchItemStatus[] = ['INVALID', 'PENDING', 'PROCESSING', 'PAID', 'FAILED', 'CANCELLED'];
export const FINAL_BATCH_STATUSES: readonly BatchFinalStatus[] = ['FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED'];

export interface PaymentBatch {
  id: string;
  tenantId: string;
  accountId: string;
  requestHash: string;
  status: BatchStatus;
  reason: string | null;
  approvalRequestId: string | null;
  itemCount: number;
  createdAt: string;
  startedAt: string | null;
  cancelledAt: string | null;
  finishedAt: string | null;
  /** `created_at` with microseconds: the item listing's cursor. */
  position: string;
}

interface PaymentBatchRow {
  id: string;
  tenant_id: string;
  account_id: string;
  request_hash: string;
  status: BatchStatus;
  reason: string | null;
  approval_request_id: string | null;
  item_count: number;
  created_at: string;
  started_at: string | null;
  cancelled_at: string | null;
  finished_at: string | null;
  position: string;
}

const toBatch = (row: PaymentBatchRow): PaymentBatch => ({
  id: row.id,
  tenantId: row.tenant_id,
  accountId: row.account_id,
  requestHash: row.request_hash,
  status: row.status,
  reason: row.reason,
  approvalRequestId: row.approval_request_id,
  itemCount: row.item_count,
  createdAt: row.created_at,
  startedAt: row.started_at,
  cancelledAt: row.cancelled_at,
  finishedAt: row.finished_at,
  position: row.position,
});

const BATCH_COLUMNS = `b.id, b.tenant_id, b.account_id, b.request_hash, b.status, b.reason, b.approval_request_id, b.item_count,
  ${isoUtc('b.created_at')} as created_at, ${isoUtc('b.started_at')} as started_at, ${isoUtc('b.cancelled_at')} as cancelled_at,
  ${isoUtc('b.finished_at')} as finished_at, ${isoUtc('b.created_at', 'US')} as position`;

export interface BatchItem {
  batchId: string;
  /** The item's position in the request, from 0. */
  ord: number;
  externalRef: string;
  kind: 'PIX' | 'TEV';
  amountCents: bigint;
  description: string | null;
  pixKey: string | null;
  pixKeyType: PixKeyType | null;
  /** A Pix item's receiver, as the directory answered (the document as the payer may see it). */
  beneficiary: Beneficiary | null;
  branch: string | null;
  accountNumber: string | null;
  destinationAccountId: string | null;
  payoutId: string | null;
  status: BatchItemStatus;
  reason: string | null;
}

interface BatchItemRow {
  batch_id: string;
  ord: number;
  external_ref: string;
  kind: 'PIX' | 'TEV';
  amount_cents: string;
  description: string | null;
  pix_key: string | null;
  pix_key_type: PixKeyType | null;
  beneficiary: Beneficiary | null;
  branch: string | null;
  account_number: string | null;
  destination_account_id: string | null;
  payout_id: string | null;
  status: BatchItemStatus;
  reason: string | null;
}

const toItem = (row: BatchItemRow): BatchItem => ({
  batchId: row.batch_id,
  ord: row.ord,
  externalRef: row.external_ref,
  kind: row.kind,
  amountCents: BigInt(row.amount_cents),
  description: row.description,
  pixKey: row.pix_key,
  pixKeyType: row.pix_key_type,
  beneficiary: row.beneficiary,
  branch: row.branch,
  accountNumber: row.account_number,
  destinationAccountId: row.destination_account_id,
  payoutId: row.payout_id,
  status: row.status,
  reason: row.reason,
});

const ITEM_COLUMNS = `i.batch_id, i.ord, i.external_ref, i.kind, i.amount_cents::text as amount_cents, i.description, i.pix_key, i.pix_key_type,
  i.beneficiary, i.branch, i.account_number, i.destination_account_id, i.payout_id, i.status, i.reason`;

export type NewBatch = Omit<PaymentBatch, 'reason' | 'createdAt' | 'startedAt' | 'cancelledAt' | 'finishedAt' | 'position'> & { idempotencyKey: string };

/** Records a batch; false when the account already has one under this Idempotency-Key. */
export async function insertBatch(em: EntityManager, batch: NewBatch): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `insert into payment_batch (id, tenant_id, account_id, idempotency_key, request_hash, status, approval_request_id, item_count)
     values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (account_id, idempotency_key) do nothing returning id`,
    [batch.id, batch.tenantId, batch.accountId, batch.idempotencyKey, batch.requestHash, batch.status, batch.approvalRequestId, batch.itemCount],
  );
  return rows.length > 0;
}

/** The approval request that holds the batch for the account's approver. */
export async function setBatchApproval(em: EntityManager, batchId: string, approvalRequestId: string): Promise<void> {
  await em.execute('update payment_batch set approval_request_id = ? where id = ?', [approvalRequestId, batchId]);
}

/** Every item of a new batch, in one statement. */
export async function insertItems(em: EntityManager, items: Omit<BatchItem, 'batchId'>[], batchId: string): Promise<void> {
  await em.execute(
    `insert into payment_batch_item (batch_id, ord, external_ref, kind, amount_cents, description, pix_key, pix_key_type, beneficiary, branch,
                                     account_number, destination_account_id, payout_id, status, reason)
     select ?, x.ord, x.external_ref, x.kind, x.amount_cents, x.description, x.pix_key, x.pix_key_type, x.beneficiary, x.branch,
            x.account_number, x.destination_account_id, x.payout_id, x.status, x.reason
       from jsonb_to_recordset(?::jsonb) as x(ord integer, external_ref text, kind text, amount_cents bigint, description text, pix_key text,
                                             pix_key_type text, beneficiary jsonb, branch text, account_number text,
                                             destination_account_id uuid, payout_id text, status text, reason text)`,
    [
      batchId,
      JSON.stringify(
        items.map((i) => ({
          ord: i.ord,
          external_ref: i.externalRef,
          kind: i.kind,
          amount_cents: i.amountCents.toString(),
          description: i.description,
          pix_key: i.pixKey,
          pix_key_type: i.pixKeyType,
          beneficiary: i.beneficiary,
          branch: i.branch,
          account_number: i.accountNumber,
          destination_account_id: i.destinationAccountId,
          payout_id: i.payoutId,
          status: i.status,
          reason: i.reason,
        })),
      ),
    ],
  );
}

export async function findBatchByKey(em: EntityManager, accountId: string, idempotencyKey: string): Promise<PaymentBatch | null> {
  const [row] = await em.execute<PaymentBatchRow[]>(`select ${BATCH_COLUMNS} from payment_batch b where b.account_id = ? and b.idempotency_key = ?`, [accountId, idempotencyKey]);
  return row ? toBatch(row) : null;
}

/** A batch of the account, in its tenant. */
export async function findBatchOfAccount(em: EntityManager, tenantId: string, accountId: string, batchId: string): Promise<PaymentBatch | null> {
  const [row] = await em.execute<PaymentBatchRow[]>(`select ${BATCH_COLUMNS} from payment_batch b where b.id = ? and b.tenant_id = ? and b.account_id = ?`, [
    batchId,
    tenantId,
    accountId,
  ]);
  return row ? toBatch(row) : null;
}

/** A held batch's approval request, as the batch's start reads it. */
export interface BatchApproval {
  status: ApprovalStatus;
  reason: string | null;
  expiresAt: string;
}

/** The batch, its row locked for the rest of the transaction (its start, its cancellation, its end), with its approval. */
export async function lockBatch(em: EntityManager, batchId: string): Promise<(PaymentBatch & { approval: BatchApproval | null }) | null> {
  const [row] = await em.execute<(PaymentBatchRow & { approval_status: ApprovalStatus | null; approval_reason: string | null; approval_expires_at: string | null })[]>(
    `select ${BATCH_COLUMNS}, r.status as approval_status, r.reason as approval_reason, ${isoUtc('r.expires_at')} as approval_expires_at
       from payment_batch b left join approval_request r on r.id = b.approval_request_id
      where b.id = ? for update of b`,
    [batchId],
  );
  if (!row) return null;
  const approval = row.approval_status ? { status: row.approval_status, reason: row.approval_reason, expiresAt: row.approval_expires_at! } : null;
  return { ...toBatch(row), approval };
}

/** A batch's new state; the times it reached are set once. */
export async function markBatch(em: EntityManager, batchId: string, status: BatchStatus, change: { reason?: string | null; started?: boolean; cancelled?: boolean } = {}): Promise<void> {
  const final = (FINAL_BATCH_STATUSES as readonly string[]).includes(status);
  await em.execute(
    `update payment_batch set status = ?, reason = coalesce(?, reason),
            started_at = case when ? then coalesce(started_at, now()) else started_at end,
            cancelled_at = case when ? then coalesce(cancelled_at, now()) else cancelled_at end,
            finished_at = case when ? then coalesce(finished_at, now()) else finished_at end
      where id = ?`,
    [status, change.reason ?? null, change.started ?? false, change.cancelled ?? false, final, batchId],
  );
}

/** The batch's items by state, and what its paid items sent. */
export async function countItems(em: EntityManager, batchId: string): Promise<{ byStatus: Record<BatchItemStatus, number>; amountCents: bigint; paidCents: bigint }> {
  const rows = await em.execute<{ status: BatchItemStatus; n: number; amount: string }[]>(
    `select status, count(*)::int as n, sum(amount_cents)::text as amount from payment_batch_item where batch_id = ? group by status`,
    [batchId],
  );
  const byStatus = Object.fromEntries(BATCH_ITEM_STATUSES.map((s) => [s, 0])) as Record<BatchItemStatus, number>;
  let amountCents = 0n;
  let paidCents = 0n;
  for (const row of rows) {
    byStatus[row.status] = row.n;
    if (row.status !== 'INVALID') amountCents += BigInt(row.amount);
    if (row.status === 'PAID') paidCents = BigInt(row.amount);
  }
  return { byStatus, amountCents, paidCents };
}

/** What the batch's items still to pay come to, per kind: the funds its start checks. */
export async function pendingTotals(em: EntityManager, batchId: string): Promise<{ kind: 'PIX' | 'TEV'; count: number; amountCents: bigint }[]> {
  const rows = await em.execute<{ kind: 'PIX' | 'TEV'; n: number; amount: string }[]>(
    `select kind, count(*)::int as n, sum(amount_cents)::text as amount from payment_batch_item where batch_id = ? and status = 'PENDING' group by kind`,
    [batchId],
  );
  return rows.map((r) => ({ kind: r.kind, count: r.n, amountCents: BigInt(r.amount) }));
}

/** The batch's Pix debited and waiting for the provider (PROCESSING). */
export async function processingCount(em: EntityManager, batchId: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(`select count(*)::int as n from payment_batch_item where batch_id = ? and status = 'PROCESSING'`, [batchId]);
  return row!.n;
}

/**
 * How many connections of `applicationName` (the api's) posted a TEV or a Pix debit within the last `windowMs`: one
 * running now, or ended since, as `pg_stat_activity` shows each connection's last statement. The request path's
 * postings are these functions' calls (`settle_tev`, `settle_tev_batch`, `debit_pix_payout`, `debit_pix_payout_batch`).
 */
export async function recentPostingsOf(em: EntityManager, applicationName: string, windowMs: number): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = ?
        and (state = 'active' or state_change > clock_timestamp() - make_interval(secs => ?::float8 / 1000))
        and (query like '%settle_tev%' or query like '%debit_pix_payout%')`,
    [applicationName, windowMs],
  );
  return row!.n;
}

/** Whether the batch has items left to pay (PENDING). */
export async function hasPending(em: EntityManager, batchId: string): Promise<boolean> {
  const [row] = await em.execute<{ any: boolean }[]>(`select exists (select from payment_batch_item where batch_id = ? and status = 'PENDING') as any`, [batchId]);
  return row!.any;
}

/**
 * The next PENDING items of one kind, in request order, locked until the transaction that pays them commits: a
 * cancellation waits for them, and finds them paid.
 */
export async function lockPendingItems(em: EntityManager, batchId: string, kind: 'PIX' | 'TEV', limit: number): Promise<BatchItem[]> {
  const rows = await em.execute<BatchItemRow[]>(
    `select ${ITEM_COLUMNS} from payment_batch_item i
      where i.batch_id = ? and i.status = 'PENDING' and i.kind = ? order by i.ord limit ? for update`,
    [batchId, kind, limit],
  );
  return rows.map(toItem);
}

/** What paying items came to, each by its position. */
export async function recordItemOutcomes(em: EntityManager, batchId: string, outcomes: { ord: number; status: BatchItemStatus; reason: string | null }[]): Promise<void> {
  if (outcomes.length === 0) return;
  await em.execute(
    `update payment_batch_item i set status = o.status, reason = o.reason, updated_at = now()
       from jsonb_to_recordset(?::jsonb) as o(ord integer, status text, reason text)
      where i.batch_id = ? and i.ord = o.ord`,
    [JSON.stringify(outcomes), batchId],
  );
}

/**
 * Pix items the provider has answered for: PAID once their payout is POSTED (or returned since), FAILED with its
 * reason when it failed or was cancelled. Reads only the batch's PROCESSING items.
 */
export async function syncPixItems(em: EntityManager, batchId: string): Promise<void> {
  await em.execute(
    `update payment_batch_item i
        set status = case when p.status in ('POSTED', 'REFUNDED') then 'PAID' else 'FAILED' end,
            reason = case when p.status in ('POSTED', 'REFUNDED') then null else coalesce(p.reason, p.status) end, updated_at = now()
       from pix_payout p
      where i.batch_id = ? and i.status = 'PROCESSING' and p.id = i.payout_id and p.status in ('POSTED', 'REFUNDED', 'FAILED', 'CANCELLED', 'REJECTED')`,
    [batchId],
  );
}

/** The batch's items not paid yet become CANCELLED with `reason`; the number cancelled. */
export async function cancelPendingItems(em: EntityManager, batchId: string, reason: string): Promise<number> {
  const rows = await em.execute<{ ord: number }[]>(
    `update payment_batch_item set status = 'CANCELLED', reason = ?, updated_at = now() where batch_id = ? and status = 'PENDING' returning ord`,
    [reason, batchId],
  );
  return rows.length;
}

/** One page of the batch's items in request order, after position `afterOrd`; `limit` rows at most. */
export async function listItems(em: EntityManager, batchId: string, status: BatchItemStatus | undefined, afterOrd: number | null, limit: number): Promise<BatchItem[]> {
  const rows = await em.execute<BatchItemRow[]>(
    `select ${ITEM_COLUMNS} from payment_batch_item i
      where i.batch_id = ? ${status ? 'and i.status = ?' : ''} ${afterOrd === null ? '' : 'and i.ord > ?'}
      order by i.ord limit ?`,
    [batchId, ...(status ? [status] : []), ...(afterOrd === null ? [] : [afterOrd]), limit],
  );
  return rows.map(toItem);
}

/** Every item of the batch, in request order (a new batch's validation, answered again on a retry). */
export async function allItems(em: EntityManager, batchId: string): Promise<BatchItem[]> {
  const rows = await em.execute<BatchItemRow[]>(`select ${ITEM_COLUMNS} from payment_batch_item i where i.batch_id = ? order by i.ord`, [batchId]);
  return rows.map(toItem);
}

/** A TEV item's destination as the tenant has it: the account its branch and number name, and whether it may receive. */
export interface TevDestination {
  ord: number;
  accountId: string | null;
  /** Closed for good (its holder CLOSED, the account REJECTED at onboarding): as if it did not exist. */
  closed: boolean;
  mayMove: boolean;
  feeInCents: bigint;
}

/** The destinations of TEV items, by branch and number as a client writes them (`holder_account_by_number`), in one query. */
export async function tevDestinations(em: EntityManager, tenantId: string, items: { ord: number; branch: string; account: string }[]): Promise<TevDestination[]> {
  if (items.length === 0) return [];
  const rows = await em.execute<{ ord: number; account_id: string | null; closed: boolean | null; may_move: boolean | null; fee_in: string | null }[]>(
    `select x.ord, d.id as account_id, (h.status = 'CLOSED' or d.status = 'REJECTED') as closed,
            account_may_move_money(d.status, h.status, h.onboarding_step) as may_move, f.tev_in::text as fee_in
       from jsonb_to_recordset(?::jsonb) as x(ord integer, branch text, account text)
       left join account d on d.id = holder_account_by_number(?, x.branch, x.account)
       left join holder h on h.id = d.holder_id
       left join lateral fee_schedule_of(d.id, d.tenant_id) f on d.id is not null`,
    [JSON.stringify(items), tenantId],
  );
  return rows.map((r) => ({ ord: r.ord, accountId: r.account_id, closed: r.closed ?? false, mayMove: r.may_move ?? false, feeInCents: BigInt(r.fee_in ?? '0') }));
}
