import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import type { Services } from '../services.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, isoUtc, pageOf } from '../shared/pagination.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import { submitTev, type TevAnswer, type TevRequest } from '../transfers/service.ts';
import type { PayoutRequest } from '../pix/payouts.ts';
import { executeUpdateWithStart, isAlreadyStarted } from '../temporal/workflow-start.ts';
import { approvalStart, decide, type ApprovalStatus } from '../../workflows/contracts/approval.ts';

/** How long an approver waits for the held payment to run (within the request deadline). */
const DECISION_DEADLINE_MS = 15_000;

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
 * caller; this records the request (the same Idempotency-Key returns the same request, another body is 409) with the
 * hand-off of its approval workflow, which waits for the approver.
 */
export async function holdForApproval(
  { orm, temporal, config }: Services,
  r: { tenantId: string; source: Pick<Account, 'id' | 'approverHolderId'>; requesterHolderId: string; idempotencyKey: string; payment: HeldPayment },
): Promise<Held> {
  const hash = requestHash(r.payment);
  const expiresAt = new Date(Date.now() + config.APPROVAL_TTL_MS);
  const { row, handOff } = await orm.em.fork().transactional(async (em) => {
    const [inserted] = await em.execute<ApprovalRow[]>(
      `insert into approval_request (id, tenant_id, account_id, requester_holder_id, approver_holder_id, kind, payload, idempotency_key, request_hash, status, expires_at)
       values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, 'PENDING', ?)
       on conflict (account_id, idempotency_key) do nothing returning *`,
      [newUuid(), r.tenantId, r.source.id, r.requesterHolderId, r.source.approverHolderId, r.payment.kind, JSON.stringify(r.payment), r.idempotencyKey, hash, expiresAt],
    );
    if (!inserted) {
      const [existing] = await em.execute<ApprovalRow[]>('select * from approval_request where account_id = ? and idempotency_key = ?', [r.source.id, r.idempotencyKey]);
      return { row: existing!, handOff: null };
    }
    const start = approvalStart({ requestId: inserted.id, tenantId: r.tenantId, accountId: r.source.id, expiresAt: expiresAt.toISOString() });
    return { row: inserted, handOff: await insertHandOff(em, config.TEMPORAL_TASK_QUEUE, start) };
  });
  assertSameRequest(row.request_hash, hash);
  if (handOff) await dispatchHandOff(temporal.client, orm.em.fork(), handOff);
  return { approvalRequestId: row.id, status: row.status, expiresAt: new Date(row.expires_at).toISOString() };
}

/** A TEV from an account under dual approval is held, as requested by the account's holder; any other pays at once. */
export async function submitTevOrHold(services: Services, r: TevRequest): Promise<{ held: Held } | { result: TevAnswer }> {
  const result = await submitTev(services, r);
  if (result.kind !== 'approval_required') return { result };
  const [source] = await services.orm.em
    .fork()
    .execute<{ id: string; holder_id: string; approver_holder_id: string }[]>('select id, holder_id, approver_holder_id from account where id = ?', [r.sourceAccountId]);
  const payment: HeldPayment = { kind: 'TEV', destinationAccountId: result.destinationAccountId, amountCents: r.amountCents.toString(), description: r.description, externalRef: r.externalRef };
  return {
    held: await holdForApproval(services, {
      tenantId: r.tenantId,
      source: { id: source!.id, approverHolderId: source!.approver_holder_id },
      requesterHolderId: source!.holder_id,
      idempotencyKey: r.idempotencyKey,
      payment,
    }),
  };
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
  // With-Start: a request whose run the hand-off has not started yet gets it now.
  const start = approvalStart({ requestId: request.id, tenantId: request.tenant_id, accountId: request.account_id, expiresAt: new Date(request.expires_at).toISOString() });
  try {
    await executeUpdateWithStart(services.temporal.client, services.config.TEMPORAL_TASK_QUEUE, start, decide, DECISION_DEADLINE_MS, [{ approve }]);
  } catch (err) {
    // Refused by the validator (another decision came first) or the run already closed (expired).
    if (err instanceof WorkflowUpdateFailedError || isAlreadyStarted(err)) throw alreadyDecided();
    const [now] = await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ?`, [request.id]);
    if (now!.status !== 'PENDING') throw alreadyDecided();
    throw new AppError(503, 'TEMPORARILY_UNAVAILABLE', 'The decision could not be applied right now; try again shortly');
  }
  const [row] = await em.execute<ApprovalRow[]>(`${SELECT} where r.id = ?`, [request.id]);
  return row!;
}
