/** The `approval_request` table's SQL, with the destination branch and number of a held TEV. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../shared/pagination.ts';
import { NOT_APPROVER, type ApprovalStatus } from '../../workflows/contracts/approval.ts';
import type { ApprovalPayment } from './held-payment.ts';

export interface ApprovalRequest {
  id: string;
  tenantId: string;
  accountId: string;
  requesterHolderId: string;
  approverHolderId: string;
  kind: ApprovalPayment['kind'];
  payment: ApprovalPayment;
  requestHash: string;
  status: ApprovalStatus;
  /** Why the payment was refused (FAILED), or why the request was cancelled (CANCELLED). */
  reason: string | null;
  operationId: string | null;
  /** ISO 8601 UTC. */
  expiresAt: string;
  decidedAt: string | null;
  createdAt: string;
  /** A held TEV's destination, as the approver sees it. */
  destination: { branch: string; account: string } | null;
  /** `created_at` with microseconds: the listing cursor. */
  position: string;
}

interface ApprovalRequestRow {
  id: string;
  tenant_id: string;
  account_id: string;
  requester_holder_id: string;
  approver_holder_id: string;
  kind: ApprovalPayment['kind'];
  payload: ApprovalPayment;
  request_hash: string;
  status: ApprovalStatus;
  reason: string | null;
  operation_id: string | null;
  expires_at: string;
  decided_at: string | null;
  created_at: string;
  position: string;
  dst_agency: string | null;
  dst_number: string | null;
}

const toRequest = (row: ApprovalRequestRow): ApprovalRequest => ({
  id: row.id,
  tenantId: row.tenant_id,
  accountId: row.account_id,
  requesterHolderId: row.requester_holder_id,
  approverHolderId: row.approver_holder_id,
  kind: row.kind,
  payment: row.payload,
  requestHash: row.request_hash,
  status: row.status,
  reason: row.reason,
  operationId: row.operation_id,
  expiresAt: row.expires_at,
  decidedAt: row.decided_at,
  createdAt: row.created_at,
  destination: row.dst_agency && row.dst_number ? { branch: row.dst_agency, account: row.dst_number } : null,
  position: row.position,
});

const SELECT = `select r.id, r.tenant_id, r.account_id, r.requester_holder_id, r.approver_holder_id, r.kind, r.payload, r.request_hash,
       r.status, r.reason, r.operation_id, ${isoUtc('r.expires_at')} as expires_at, ${isoUtc('r.decided_at')} as decided_at,
       ${isoUtc('r.created_at')} as created_at, ${isoUtc('r.created_at', 'US')} as position, d.agency as dst_agency, d.number as dst_number
  from approval_request r
  left join account d on r.kind = 'TEV' and d.id = (r.payload->>'destinationAccountId')::uuid`;

const one = async (em: EntityManager, where: string, params: unknown[]) => {
  const [row] = await em.execute<ApprovalRequestRow[]>(`${SELECT} where ${where}`, params);
  return row ? toRequest(row) : null;
};

export interface NewApprovalRequest {
  id: string;
  tenantId: string;
  accountId: string;
  requesterHolderId: string;
  approverHolderId: string;
  payment: ApprovalPayment;
  idempotencyKey: string;
  requestHash: string;
  expiresAt: Date;
  /** Born cancelled: the account's dual approval was turned off between the payment's check and its hold. */
  cancelled: boolean;
}

/** Why a request was cancelled: its account's dual approval was turned off while it waited. */
export const DUAL_APPROVAL_DISABLED = 'DUAL_APPROVAL_DISABLED';

/** Records a PENDING (or cancelled) request; false when the account already has one under this idempotency key. */
export async function insertApprovalRequest(em: EntityManager, request: NewApprovalRequest): Promise<boolean> {
  const inserted = await em.execute<{ id: string }[]>(
    `insert into approval_request (id, tenant_id, account_id, requester_holder_id, approver_holder_id, kind, payload, idempotency_key, request_hash, status, reason, expires_at, decided_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, case when ? then now() end)
     on conflict (account_id, idempotency_key) do nothing returning id`,
    [
      request.id,
      request.tenantId,
      request.accountId,
      request.requesterHolderId,
      request.approverHolderId,
      request.payment.kind,
      JSON.stringify(request.payment),
      request.idempotencyKey,
      request.requestHash,
      request.cancelled ? 'CANCELLED' : 'PENDING',
      request.cancelled ? DUAL_APPROVAL_DISABLED : null,
      request.expiresAt,
      request.cancelled,
    ],
  );
  return inserted.length > 0;
}

/**
 * The account's approver now (null: dual approval is off), its row locked `for key share` until the transaction
 * ends. The operator's change of the account's dual approval locks the row `for update` (`account:dual-approval`):
 * the two wait for each other, so a request is held, or decided, either wholly before the change or wholly after it.
 * Key share is the weakest lock that does this: it leaves the account's postings (`for no key update`) free.
 */
export async function lockApproverOf(em: EntityManager, accountId: string): Promise<string | null> {
  const [row] = await em.execute<{ approver_holder_id: string | null }[]>('select approver_holder_id from account where id = ? for key share', [accountId]);
  if (!row) throw new Error(`account ${accountId} does not exist`);
  return row.approver_holder_id;
}

export const findApprovalByKey = (em: EntityManager, accountId: string, idempotencyKey: string) =>
  one(em, 'r.account_id = ? and r.idempotency_key = ?', [accountId, idempotencyKey]);

export const findApproval = (em: EntityManager, id: string) => one(em, 'r.id = ?', [id]);

/** The tenant's requests among `ids` (in no order): what became of payments held for approval, read beside them. */
export async function findApprovalsOfTenant(em: EntityManager, tenantId: string, ids: readonly string[]): Promise<ApprovalRequest[]> {
  if (ids.length === 0) return [];
  const rows = await em.execute<ApprovalRequestRow[]>(`${SELECT} where r.tenant_id = ? and r.id = any(?::uuid[])`, [tenantId, `{${ids.join(',')}}`]);
  return rows.map(toRequest);
}

/** A request of the tenant that the holder requested or must approve. */
export const findApprovalOfHolder = (em: EntityManager, holder: { id: string; tenantId: string }, id: string) =>
  one(em, 'r.id = ? and r.tenant_id = ? and (r.requester_holder_id = ? or r.approver_holder_id = ?)', [id, holder.tenantId, holder.id, holder.id]);

/** A request the holder may try to decide: as its requester, its approver, or an approver it was moved away from. */
export const findApprovalForDecision = (em: EntityManager, holder: { id: string; tenantId: string }, id: string) =>
  one(em, 'r.id = ? and r.tenant_id = ? and (r.requester_holder_id = ? or r.approver_holder_id = ? or ?::uuid = any(r.former_approver_holder_ids))', [
    id,
    holder.tenantId,
    holder.id,
    holder.id,
    holder.id,
  ]);

/** The approver's requests, newest first, after `after` when given; `limit` rows at most. */
export async function listApprovalsOfApprover(
  em: EntityManager,
  approverId: string,
  status: ApprovalStatus | undefined,
  after: { at: string; id: string } | null,
  limit: number,
): Promise<ApprovalRequest[]> {
  const rows = await em.execute<ApprovalRequestRow[]>(
    `${SELECT}
      where r.approver_holder_id = ? ${status ? 'and r.status = ?' : ''} ${after ? 'and (r.created_at, r.id) < (?::timestamptz, ?::uuid)' : ''}
      order by r.created_at desc, r.id desc limit ?`,
    [approverId, ...(status ? [status] : []), ...(after ? [after.at, after.id] : []), limit],
  );
  return rows.map(toRequest);
}

/** Where a request stands for a decision: pending and open to it, refused to its decider, or past pending (that state). */
type Standing = 'OPEN' | typeof NOT_APPROVER | Exclude<ApprovalStatus, 'PENDING'>;

/**
 * Locks the request for a decision by `decidedBy` (null: a decision sent before deciders were recorded) and checks it
 * against its account as it is now, its account row first (`lockApproverOf`), then its own. A pending request whose
 * account no longer has dual approval is cancelled here. A decider who is not the request's approver, or a request
 * whose approver is no longer the account's, is refused. A request past pending is left as it is.
 */
async function lockForDecision(em: EntityManager, id: string, decidedBy: string | null): Promise<Standing> {
  const [request] = await em.execute<{ account_id: string }[]>('select account_id from approval_request where id = ?', [id]);
  if (!request) throw new Error(`approval request ${id} does not exist`);
  const accountApprover = await lockApproverOf(em, request.account_id);
  const [row] = await em.execute<{ status: ApprovalStatus; approver_holder_id: string }[]>('select status, approver_holder_id from approval_request where id = ? for update', [id]);
  const { status, approver_holder_id: approver } = row!;
  if (status !== 'PENDING') return status;
  if (!accountApprover) {
    await cancelPendingApprovals(em, DUAL_APPROVAL_DISABLED, 'r.id = ?', [id]);
    return 'CANCELLED';
  }
  if (approver !== accountApprover || (decidedBy !== null && decidedBy !== approver)) return NOT_APPROVER;
  return 'OPEN';
}

/**
 * An open request becomes APPROVED (again, on a retry) when `decidedBy` may still approve it (`lockForDecision`),
 * in the caller's transaction, which then runs the payment. Otherwise: the refusal, or CANCELLED.
 */
export async function markApproved(em: EntityManager, id: string, decidedBy: string | null): Promise<ApprovalRequest | typeof NOT_APPROVER | 'CANCELLED'> {
  const standing = await lockForDecision(em, id, decidedBy);
  if (standing === NOT_APPROVER || standing === 'CANCELLED') return standing;
  // APPROVED: this step is retried after its transaction committed (the payment runs again idempotently).
  if (standing !== 'OPEN' && standing !== 'APPROVED') throw new Error(`approval request ${id} is already ${standing}`);
  await em.execute(`update approval_request set status = 'APPROVED', decided_at = coalesce(decided_at, now()) where id = ?`, [id]);
  return (await findApproval(em, id))!;
}

/** A pending request becomes REJECTED (it is already, on a retry) when `decidedBy` may still decide it. */
export async function markRejected(em: EntityManager, id: string, decidedBy: string | null): Promise<'REJECTED' | typeof NOT_APPROVER | 'CANCELLED'> {
  const standing = await lockForDecision(em, id, decidedBy);
  if (standing === 'REJECTED' || standing === NOT_APPROVER || standing === 'CANCELLED') return standing;
  if (standing !== 'OPEN') throw new Error(`approval request ${id} is already ${standing}`);
  await em.execute(`update approval_request set status = 'REJECTED', decided_at = now() where id = ?`, [id]);
  return 'REJECTED';
}

/** What waking a request's run needs. */
export interface CancelledRequest {
  requestId: string;
  tenantId: string;
  accountId: string;
  expiresAt: string;
}

/** Why a request was cancelled: the batch it held was cancelled by its requester while it waited. */
export const BATCH_CANCELLED = 'BATCH_CANCELLED';

/** Cancels, for `reason`, the pending requests `where` selects (over `approval_request r`). */
async function cancelPendingApprovals(em: EntityManager, reason: string, where: string, params: unknown[]): Promise<CancelledRequest[]> {
  const rows = await em.execute<{ id: string; tenant_id: string; account_id: string; expires_at: string }[]>(
    `update approval_request r set status = 'CANCELLED', reason = ?, decided_at = now()
      where r.status = 'PENDING' and ${where}
      returning r.id, r.tenant_id, r.account_id, ${isoUtc('r.expires_at')} as expires_at`,
    [reason, ...params],
  );
  return rows.map((row) => ({ requestId: row.id, tenantId: row.tenant_id, accountId: row.account_id, expiresAt: row.expires_at }));
}

/** The account's dual approval is turned off: its pending requests are cancelled (in the same transaction). */
export const cancelPendingApprovalsOf = (em: EntityManager, accountId: string) => cancelPendingApprovals(em, DUAL_APPROVAL_DISABLED, 'r.account_id = ?', [accountId]);

/** The request's payment is withdrawn (a batch cancelled while it waited): cancelled if still pending. */
export const cancelPendingApproval = async (em: EntityManager, requestId: string, reason: string): Promise<CancelledRequest | null> =>
  (await cancelPendingApprovals(em, reason, 'r.id = ?', [requestId]))[0] ?? null;

/**
 * The account's approver is replaced: its pending requests move to the new one (in the same transaction), and each
 * remembers the approvers it was moved from, who are then refused by name. The ids of the requests moved.
 */
export async function movePendingApprovals(em: EntityManager, accountId: string, approverHolderId: string): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `update approval_request set former_approver_holder_ids = array_append(former_approver_holder_ids, approver_holder_id), approver_holder_id = ?
      where account_id = ? and status = 'PENDING' and approver_holder_id <> ? returning id`,
    [approverHolderId, accountId, approverHolderId],
  );
  return rows.map((r) => r.id);
}

/** Gives an open request its final state; a request already final keeps its own. Returns the state it has now. */
export async function closeApprovalRequest(
  em: EntityManager,
  id: string,
  status: Exclude<ApprovalStatus, 'PENDING' | 'APPROVED'>,
  result: { operationId: string; reason: string | null } | null,
): Promise<ApprovalStatus> {
  const [row] = await em.execute<{ status: ApprovalStatus }[]>(
    `update approval_request set status = ?, reason = ?, operation_id = coalesce(?, operation_id), decided_at = coalesce(decided_at, now())
      where id = ? and status in ('PENDING', 'APPROVED') returning status`,
    [status, result?.reason ?? null, result?.operationId ?? null, id],
  );
  if (row) return row.status;
  const [current] = await em.execute<{ status: ApprovalStatus }[]>('select status from approval_request where id = ?', [id]);
  return current!.status;
}
