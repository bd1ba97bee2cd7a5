import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import type { Services } from '../services.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, isoUtc, pageOf } from '../shared/pagination.ts';
import { SearchAttributes } from '../temporal/search-attributes.ts';
import { submitTev, type TevRequest, type TevResult } from '../transfers/service.ts';
import type { PayoutRequest } from '../pix/payouts.ts';
import { approvalWorkflow, approvalWorkflowId, decide, type ApprovalStatus } from '../../workflows/approval.ts';

/** What a held payment will do once approved: a TEV to an account, or a Pix payout to a key. */
export type HeldPayment =
  | { kind: 'TEV'; destinationAccountId: string; amountCents: string; description: string | null; externalRef: string | null }
  | { kind: 'PIX'; channel: PayoutRequest['channel']; amountCents: string; pixKey: string; pixKeyType: PayoutRequest['pixKeyType']; beneficiary: PayoutRequest['beneficiary']; qr: PayoutRequest['qr']; description: string };

export interface ApprovalRow {
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
  dst_agency: string | null;
  dst_number: string | null;
}

export interface Held {
  approvalRequestId: string;
  status: ApprovalStatus;
  expiresAt: string;
}

const iso = (t: string | null) => (t ? new Date(t).toISOString() : null);

const FROM = `from approval_request r left join account d on r.kind = 'TEV' and d.id = (r.payload->>'destinationAccountId')::uuid`;
const SELECT = `select r.*, d.agency as dst_agency, d.number as dst_number ${FROM}`;

/** What requester and approver see of a request. */
export function approvalView(r: ApprovalRow) {
  const p = r.payload;
  const finished = r.operation_id && (r.status === 'EXECUTED' || r.status === 'FAILED');
  return {
    approvalRequestId: r.id,
    status: r.status,
    kind: r.kind,
    accountId: r.account_id,
    amountCents: p.amountCents,
    destination: p.kind === 'TEV' ? { branch: r.dst_agency!, account: r.dst_number! } : { pixKey: p.pixKey, pixKeyType: p.pixKeyType, name: p.beneficiary.name },
    description: p.description,
    externalRef: p.kind === 'TEV' ? p.externalRef : null,
    createdAt: iso(r.created_at),
    expiresAt: iso(r.expires_at),
    decidedAt: iso(r.decided_at),
    result: finished
      ? { [r.kind === 'TEV' ? 'tevId' : 'payoutId']: r.operation_id, status: r.status === 'EXECUTED' ? (r.kind === 'TEV' ? 'DONE' : 'PROCESSING') : 'FAILED', reason: r.reason }
      : null,
  };
}

/**
 * Holds a payment of an account under dual approval: everything an immediate payment checks has been checked by the
 * caller; this records the request (the same Idempotency-Key returns the same request, another body is 409) and
 * starts the approval workflow that waits for the approver.
 */
export async function holdForApproval(
  { orm, temporal, config }: Services,
  r: { tenantId: string; source: Account; requesterHolderId: string; idempotencyKey: string; payment: HeldPayment },
): Promise<Held> {
  const em = orm.em.fork();
  const hash = requestHash(r.payment);
  const expiresAt = new Date(Date.now() + config.APPROVAL_TTL_MS);
  const [inserted] = await em.execute<{ id: string }[]>(
    `insert into approval_request (id, tenant_id, account_id, requester_holder_id, approver_holder_id, kind, payload, idempotency_key, request_hash, status, expires_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, 'PENDING', ?)
     on conflict (account_id, idempotency_key) do nothing returning id`,
    [newUuid(), r.tenantId, r.source.id, r.requesterHolderId, r.source.approverHolderId, r.payment.kind, JSON.stringify(r.payment), r.idempotencyKey, hash, expiresAt],
  );
  const [row] = inserted
    ? await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ?`, [inserted.id])
    : await em.execute<ApprovalRow[]>(`${SELECT} where r.account_id = ? and r.idempotency_key = ?`, [r.source.id, r.idempotencyKey]);
  assertSameRequest(row!.request_hash, hash);
  await temporal.client.workflow
    .start(approvalWorkflow, {
      workflowId: approvalWorkflowId(row!.id),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ requestId: row!.id, expiresAt: new Date(row!.expires_at).toISOString() }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: SearchAttributes.TenantId, value: r.tenantId },
        { key: SearchAttributes.AccountId, value: r.source.id },
        { key: SearchAttributes.ApprovalRequestId, value: row!.id },
      ],
    })
    .catch((err: unknown) => {
      // A finished request's run is closed: the stored request is the answer.
      if (!(err instanceof Error && err.name === 'WorkflowExecutionAlreadyStartedError')) throw err;
    });
  return { approvalRequestId: row!.id, status: row!.status, expiresAt: new Date(row!.expires_at).toISOString() };
}

/** A TEV from an account under dual approval is held; any other pays at once. */
export async function submitTevOrHold(services: Services, r: TevRequest, requesterHolderId: string): Promise<{ held: Held } | { result: TevResult }> {
  if (!r.source.approverHolderId) return { result: await submitTev(services, r) };
  if (r.source.id === r.destination.id) throw new AppError(400, 'SAME_ACCOUNT', 'The destination is the source account itself');
  const payment: HeldPayment = { kind: 'TEV', destinationAccountId: r.destination.id, amountCents: r.amountCents.toString(), description: r.description, externalRef: r.externalRef };
  return { held: await holdForApproval(services, { tenantId: r.tenantId, source: r.source, requesterHolderId, idempotencyKey: r.idempotencyKey, payment }) };
}

/** A request the holder may see: its requester or its approver, in its tenant. */
export async function visibleApproval(em: EntityManager, holder: { id: string; tenantId: string }, id: string): Promise<ApprovalRow> {
  const [row] = await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ? and r.tenant_id = ? and (r.requester_holder_id = ? or r.approver_holder_id = ?)`, [
    id,
    holder.tenantId,
    holder.id,
    holder.id,
  ]);
  if (!row) throw notFound('Approval request');
  return row;
}

export async function listForApprover(em: EntityManager, cursorKey: string, approverId: string, status: ApprovalStatus | undefined, limit: number, cursor: string | undefined) {
  const scope = `approvals:${approverId}:${status ?? ''}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await em.execute<(ApprovalRow & { position: string })[]>(
    `${SELECT.replace('select r.*,', `select r.*, ${isoUtc('r.created_at', 'US')} as position,`)}
      where r.approver_holder_id = ? ${status ? 'and r.status = ?' : ''} ${after ? 'and (r.created_at, r.id) < (?::timestamptz, ?::uuid)' : ''}
      order by r.created_at desc, r.id desc limit ?`,
    [approverId, ...(status ? [status] : []), ...(after ? [after.at, after.id] : []), limit + 1],
  );
  const { items, pagination } = pageOf(rows, limit, cursorKey, scope);
  return { approvals: items.map(approvalView), pagination };
}

/** Sends the approver's decision to the request's workflow and answers with the request in its final state. */
export async function decideApproval(services: Services, em: EntityManager, request: ApprovalRow, approve: boolean): Promise<ApprovalRow> {
  const alreadyDecided = () => new AppError(409, 'APPROVAL_ALREADY_DECIDED', 'This approval request was already decided or has expired');
  if (request.status !== 'PENDING' || Date.parse(request.expires_at) <= Date.now()) throw alreadyDecided();
  try {
    await services.temporal.client.workflow.getHandle(approvalWorkflowId(request.id)).executeUpdate(decide, { args: [{ approve }] });
  } catch (err) {
    // Refused by the validator (another decision came first) or the run already closed (expired).
    if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) throw alreadyDecided();
    const [now] = await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ?`, [request.id]);
    if (now!.status !== 'PENDING') throw alreadyDecided();
    throw err;
  }
  const [row] = await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ?`, [request.id]);
  return row!;
}
