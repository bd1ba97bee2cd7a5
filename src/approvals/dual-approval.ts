import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOffs, type HandOff } from '../handoff/store.ts';
import { Holder } from '../identity/entities.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import type { Temporal } from '../temporal/connection.ts';
import { approvalCancelledWake } from '../../workflows/contracts/approval.ts';
import { cancelPendingApprovalsOf, movePendingApprovals } from './store.ts';

/** What the operator asks of an account: its approver, by document in the account's tenant, or (null) no approver. */
export interface DualApprovalChange {
  accountId: string;
  approverDocument: string | null;
}

/** Where the change runs: a session outside any transaction (the change commits its own), and Temporal, reached lazily. */
export interface DualApprovalContext {
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>;
  em: EntityManager;
  temporal(): Promise<Temporal>;
}

/**
 * Sets the account's approver, or turns dual approval off, and brings its pending requests along in the same
 * transaction: they move to the new approver, or are cancelled. After the commit the cancelled requests' runs are
 * woken to end (through the hand-off: what cannot be done now, the reconciler does).
 */
export async function setDualApproval(ctx: DualApprovalContext, change: DualApprovalChange) {
  const { answer, handOffs } = await ctx.em.transactional((tx) => changeApprover(tx, ctx.config.TEMPORAL_TASK_QUEUE, change));
  await wake(ctx, handOffs);
  return answer;
}
setDualApproval.raises = refusals('NOT_FOUND', 'APPROVER_IS_ACCOUNT_HOLDER', 'APPROVER_NOT_ACTIVE');

/**
 * The change, in its transaction. The account row is locked `for update` first, so a decision being executed (which
 * holds it `for key share`) finishes before the change, and one after it sees the account as changed.
 */
async function changeApprover(em: EntityManager, taskQueue: string, change: DualApprovalChange) {
  const account = await em.findOne(Account, { id: change.accountId, kind: 'HOLDER' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!account) throw notFound('Account');
  let movedRequests: string[] = [];
  let cancelledRequests: string[] = [];
  let handOffs: HandOff[] = [];
  if (change.approverDocument === null) {
    account.approverHolderId = null;
    const cancelled = await cancelPendingApprovalsOf(em, account.id);
    cancelledRequests = cancelled.map((request) => request.requestId);
    handOffs = await insertHandOffs(em, taskQueue, cancelled.map(approvalCancelledWake));
  } else {
    const approver = await em.findOne(Holder, { tenantId: account.tenantId, document: change.approverDocument });
    if (!approver) throw notFound('Approver holder in the account tenant');
    if (approver.id === account.holderId) throw new DomainError('APPROVER_IS_ACCOUNT_HOLDER');
    if (approver.status !== 'ACTIVE') throw new DomainError('APPROVER_NOT_ACTIVE');
    account.approverHolderId = approver.id;
    movedRequests = await movePendingApprovals(em, account.id, approver.id);
  }
  await em.flush();
  return {
    answer: {
      accountId: account.id,
      dualApproval: account.approverHolderId ? { approverHolderId: account.approverHolderId } : null,
      movedRequests,
      cancelledRequests,
    },
    handOffs,
  };
}

/** Ends the cancelled requests' runs now; whatever cannot be done here (Temporal unreachable), the reconciler does. */
async function wake({ em, temporal }: DualApprovalContext, handOffs: HandOff[]): Promise<void> {
  if (handOffs.length === 0) return;
  const client = await temporal().then(
    (connected) => connected.client,
    () => null,
  );
  if (client) await Promise.all(handOffs.map((handOff) => dispatchHandOff(client, em, handOff)));
}
