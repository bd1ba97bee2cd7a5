/** The `approval_request` table's SQL, with the destination branch and number of a held TEV. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../shared/pagination.ts';
import type { ApprovalStatus } from '../../workflows/contracts/approval.ts';
import type { HeldPayment } from './held-payment.ts';

export interface ApprovalRequest {
  id: string;
  tenantId: string;
  accountId: string;
  requesterHolderId: string;
  approverHolderId: string;
  kind: 'TEV' | 'PIX';
  payment: HeldPayment;
  requestHash: string;
  status: ApprovalStatus;
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
  kind: 'TEV' | 'PIX';
  payload: HeldPayment;
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

const toRequest = (r: ApprovalRequestRow): ApprovalRequest => ({
  id: r.id,
  tenantId: r.tenant_id,
  accountId: r.account_id,
  requesterHolderId: r.requester_holder_id,
  approverHolderId: r.approver_holder_id,
  kind: r.kind,
  payment: r.payload,
  requestHash: r.request_hash,
  status: r.status,
  reason: r.reason,
  operationId: r.operation_id,
  expiresAt: r.expires_at,
  decidedAt: r.decided_at,
  createdAt: r.created_at,
  destination: r.dst_agency && r.dst_number ? { branch: r.dst_agency, account: r.dst_number } : null,
  position: r.position,
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
  payment: HeldPayment;
  idempotencyKey: string;
  requestHash: string;
  expiresAt: Date;
}

/** Records a PENDING request; false when the account already has one under this idempotency key. */
export async function insertApprovalRequest(em: EntityManager, r: NewApprovalRequest): Promise<boolean> {
  const inserted = await em.execute<{ id: string }[]>(
    `insert into approval_request (id, tenant_id, account_id, requester_holder_id, approver_holder_id, kind, payload, idempotency_key, request_hash, status, expires_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, 'PENDING', ?)
     on conflict (account_id, idempotency_key) do nothing returning id`,
    [r.id, r.tenantId, r.accountId, r.requesterHolderId, r.approverHolderId, r.payment.kind, JSON.stringify(r.payment), r.idempotencyKey, r.requestHash, r.expiresAt],
  );
  return inserted.length > 0;
}

export const findApprovalByKey = (em: EntityManager, accountId: string, idempotencyKey: string) =>
  one(em, 'r.account_id = ? and r.idempotency_key = ?', [accountId, idempotencyKey]);

export const findApproval = (em: EntityManager, id: string) => one(em, 'r.id = ?', [id]);

/** A request of the tenant that the holder requested or must approve. */
export const findApprovalOfHolder = (em: EntityManager, holder: { id: string; tenantId: string }, id: string) =>
  one(em, 'r.id = ? and r.tenant_id = ? and (r.requester_holder_id = ? or r.approver_holder_id = ?)', [id, holder.tenantId, holder.id, holder.id]);

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

/** An open request becomes APPROVED (again, on a retry); null when it is no longer open. */
export async function markApproved(em: EntityManager, id: string): Promise<ApprovalRequest | null> {
  const updated = await em.execute<{ id: string }[]>(
    `update approval_request set status = 'APPROVED', decided_at = coalesce(decided_at, now())
      where id = ? and status in ('PENDING', 'APPROVED') returning id`,
    [id],
  );
  return updated.length > 0 ? findApproval(em, id) : null;
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
