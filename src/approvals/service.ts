import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { checkPin } from '../identity/pin.ts';
import type { PlatformContext, ServiceContext } from '../platform-context.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import { executeUpdateWithStart, isAlreadyStarted } from '../temporal/workflow-start.ts';
import { NOT_APPROVER, approvalCancelledWake, approvalStart, decide, type ApprovalStatus } from '../../workflows/contracts/approval.ts';
import type { ApprovalPayment } from './held-payment.ts';
import {
  cancelPendingApproval,
  closeApprovalRequest,
  findApproval,
  findApprovalByKey,
  findApprovalForDecision,
  findApprovalOfHolder,
  insertApprovalRequest,
  listApprovalsOfApprover,
  lockApproverOf,
  markApproved,
  markRejected,
  type ApprovalRequest,
} from './store.ts';

/** How long an approver waits for the held payment to run (within the request deadline). */
const DECISION_DEADLINE_MS = 15_000;

export interface Held {
  approvalRequestId: string;
  status: ApprovalStatus;
  expiresAt: string;
}

/** A payment for the approver of its source account: who asks for it, under which Idempotency-Key. */
export interface PaymentToHold {
  tenantId: string;
  source: Pick<Account, 'id' | 'approverHolderId'>;
  requesterHolderId: string;
  idempotencyKey: string;
  payment: ApprovalPayment;
}

/**
 * Holds a payment of an account under dual approval: everything an immediate payment checks has been checked by the
 * caller; this records the request (the same Idempotency-Key returns the same request, another body is 409) with the
 * hand-off of its approval workflow, which waits for the approver. The request goes to the account's approver as it
 * is at commit (its row locked meanwhile); if dual approval was turned off since the caller's check, the request is
 * recorded CANCELLED, as if it had been pending then, and the requester sends the payment again.
 */
export async function holdForApproval({ orm, temporal, config }: ServiceContext, toHold: PaymentToHold): Promise<Held> {
  const { request, handOff } = await orm.em.fork().transactional((em) => recordHold(em, config, toHold));
  assertSameRequest(request.requestHash, requestHash(toHold.payment));
  if (handOff) await dispatchHandOff(temporal.client, orm.em.fork(), handOff);
  return { approvalRequestId: request.id, status: request.status, expiresAt: request.expiresAt };
}

/**
 * `holdForApproval`'s records, in the caller's transaction (a batch payout holds itself with the batch): the request,
 * or the one already under this Idempotency-Key, and its workflow's hand-off, which the caller carries out after its
 * commit. The caller compares the request's hash with its own.
 */
export async function recordHold(
  em: EntityManager,
  config: Pick<Config, 'APPROVAL_TTL_MS' | 'TEMPORAL_TASK_QUEUE'>,
  { tenantId, source, requesterHolderId, idempotencyKey, payment }: PaymentToHold,
): Promise<{ request: ApprovalRequest; handOff: HandOff | null }> {
  const expiresAt = new Date(Date.now() + config.APPROVAL_TTL_MS);
  const id = newUuid();
  const approverHolderId = await lockApproverOf(em, source.id);
  const created = await insertApprovalRequest(em, {
    id,
    tenantId,
    accountId: source.id,
    requesterHolderId,
    approverHolderId: approverHolderId ?? source.approverHolderId!,
    payment,
    idempotencyKey,
    requestHash: requestHash(payment),
    expiresAt,
    cancelled: approverHolderId === null,
  });
  if (!created) return { request: (await findApprovalByKey(em, source.id, idempotencyKey))!, handOff: null };
  if (approverHolderId === null) return { request: (await findApproval(em, id))!, handOff: null };
  const start = approvalStart({ requestId: id, tenantId, accountId: source.id, expiresAt: expiresAt.toISOString() });
  return { request: (await findApproval(em, id))!, handOff: await insertHandOff(em, config.TEMPORAL_TASK_QUEUE, start) };
}

/**
 * The requester withdraws a held payment (a batch cancelled while it waited): its request is cancelled with `reason`
 * if still pending, and its run's wake recorded, in the caller's transaction; null when it was no longer pending.
 */
export async function withdrawApproval(em: EntityManager, taskQueue: string, requestId: string, reason: string): Promise<HandOff | null> {
  const cancelled = await cancelPendingApproval(em, requestId, reason);
  return cancelled ? insertHandOff(em, taskQueue, approvalCancelledWake(cancelled)) : null;
}

holdForApproval.raises = refusals(assertSameRequest);

/** A request the holder may see: its requester or its (current) approver, in its tenant. */
export async function readApproval(em: EntityManager, holder: { id: string; tenantId: string }, id: string) {
  const request = await findApprovalOfHolder(em, holder, id);
  if (!request) throw notFound('Approval request');
  return request;
}
readApproval.raises = refusals('NOT_FOUND');

export async function listForApprover(em: EntityManager, cursorKey: string, approverId: string, status: ApprovalStatus | undefined, limit: number, cursor: string | undefined) {
  const scope = `approvals:${approverId}:${status ?? ''}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await listApprovalsOfApprover(em, approverId, status, after, limit + 1);
  const { items, pagination } = pageOf(rows, limit, cursorKey, scope);
  return { approvals: items, pagination };
}

const notApprover = () => new DomainError('NOT_APPROVER');

/** The workflow refused the decider: the request was moved to another approver after the checks here. */
const refusedAsNotApprover = (err: unknown) => err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure && err.cause.type === NOT_APPROVER;

/**
 * The approver's decision, with their PIN: sent to the request's workflow, which runs the payment on approval.
 * Answers the request in its final state. Only the account's approver now decides: an approver replaced since
 * the request was held is refused (NOT_APPROVER), here or, when the replacement raced the decision, by the workflow's
 * step, which checks the decider again under lock; a request cancelled meanwhile is 409.
 */
export async function decideApproval(platform: PlatformContext, auth: HolderAuth, id: string, approve: boolean, pin: string | undefined) {
  const { em } = auth;
  const request = await findApprovalForDecision(em, auth.holder, id);
  if (!request) throw notFound('Approval request');
  if (request.approverHolderId !== auth.holder.id) throw notApprover();
  await checkPin(auth, platform.config, pin);
  const alreadyDecided = () => new DomainError('APPROVAL_ALREADY_DECIDED');
  if (request.status !== 'PENDING' || Date.parse(request.expiresAt) <= Date.now()) throw alreadyDecided();
  // With-Start: a request whose run the hand-off has not started yet gets it now.
  const start = approvalStart({ requestId: request.id, tenantId: request.tenantId, accountId: request.accountId, expiresAt: request.expiresAt });
  let final: ApprovalStatus;
  try {
    final = await executeUpdateWithStart(platform.temporal.client, platform.config.TEMPORAL_TASK_QUEUE, start, decide, DECISION_DEADLINE_MS, [{ approve, decidedBy: auth.holder.id }]);
  } catch (err) {
    if (refusedAsNotApprover(err)) throw notApprover();
    // Refused by the validator (another decision came first) or the run already closed (expired, cancelled).
    if (err instanceof WorkflowUpdateFailedError || isAlreadyStarted(err)) throw alreadyDecided();
    if ((await findApproval(em, request.id))!.status !== 'PENDING') throw alreadyDecided();
    throw new DomainError('TEMPORARILY_UNAVAILABLE');
  }
  // Cancelled before this decision was acted on: it decided nothing.
  if (final === 'CANCELLED') throw alreadyDecided();
  return (await findApproval(em, request.id))!;
}
decideApproval.raises = refusals('NOT_FOUND', 'NOT_APPROVER', checkPin, 'APPROVAL_ALREADY_DECIDED', 'TEMPORARILY_UNAVAILABLE');

/** The approval run's last step: an open request takes its final state; one already final keeps its own (retries are harmless). */
export const closeApproval = (em: EntityManager, requestId: string, status: Parameters<typeof closeApprovalRequest>[2], result: Parameters<typeof closeApprovalRequest>[3]) =>
  closeApprovalRequest(em, requestId, status, result);

/**
 * The approval step's decision, in the caller's transaction, which then runs the held payment: the request APPROVED
 * when `decidedBy` may still approve it, checked under lock against its account (`markApproved`); else why not.
 */
export const approveRequest = (tx: EntityManager, requestId: string, decidedBy: string | null) => markApproved(tx, requestId, decidedBy);

/** Rejects the request, with the same check of the decider as an approval (`markRejected`). */
export const rejectApproval = (em: EntityManager, requestId: string, decidedBy: string | null) => em.transactional((tx) => markRejected(tx, requestId, decidedBy));
