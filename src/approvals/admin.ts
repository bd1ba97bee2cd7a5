import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { command, CommandError, presentFlag, type AdminContext } from '../cli/command.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOffs, type HandOff } from '../handoff/store.ts';
import { Holder } from '../identity/entities.ts';
import { digitsDocument } from '../identity/schemas.ts';
import { notFound } from '../shared/errors.ts';
import { z } from '../shared/zod.ts';
import { approvalCancelledWake } from '../../workflows/contracts/approval.ts';
import { cancelPendingApprovalsOf, movePendingApprovals } from './store.ts';

const flags = z.object({ account: z.uuid(), 'approver-document': digitsDocument.optional(), off: presentFlag });

/**
 * Sets the account's approver, or turns dual approval off, and brings its pending requests along in the same
 * transaction: they move to the new approver, or are cancelled (their runs woken to end, through the hand-off). The
 * account row is locked `for update` first, so a decision being executed (which holds it `for key share`) finishes
 * before the change, and one after it sees the account as changed.
 */
async function setDualApproval(em: EntityManager, taskQueue: string, f: z.infer<typeof flags>) {
  const account = await em.findOne(Account, { id: f.account, kind: 'HOLDER' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!account) throw notFound('Account');
  let movedRequests: string[] = [];
  let cancelledRequests: string[] = [];
  let handOffs: HandOff[] = [];
  if (f.off) {
    account.approverHolderId = null;
    const cancelled = await cancelPendingApprovalsOf(em, account.id);
    cancelledRequests = cancelled.map((r) => r.requestId);
    handOffs = await insertHandOffs(em, taskQueue, cancelled.map(approvalCancelledWake));
  } else {
    if (!f['approver-document']) throw new CommandError('USAGE_ERROR', 'Give --approver-document D, or --off');
    const approver = await em.findOne(Holder, { tenantId: account.tenantId, document: f['approver-document'] });
    if (!approver) throw notFound('Approver holder in the account tenant');
    if (approver.id === account.holderId) throw new CommandError('INVALID_APPROVER', "The approver must be another holder than the account's own");
    if (approver.status !== 'ACTIVE') throw new CommandError('INVALID_APPROVER', 'The approver must be an ACTIVE holder');
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
async function wake({ em, temporal }: AdminContext, handOffs: HandOff[]): Promise<void> {
  if (handOffs.length === 0) return;
  const client = await temporal().then(
    (t) => t.client,
    () => null,
  );
  if (client) await Promise.all(handOffs.map((h) => dispatchHandOff(client, em, h)));
}

export const approvalCommands = {
  'account:dual-approval': command({
    summary:
      "Require an approver's approval for every payment from an account (another ACTIVE holder of the tenant), or --off. Pending requests follow: they move to the new approver, or are cancelled",
    usage: '--account A (--approver-document D | --off)',
    // The cancellations must be committed before the requests' runs are woken to end.
    transactional: false,
    flags,
    async run(ctx, f) {
      const { answer, handOffs } = await ctx.em.transactional((tx) => setDualApproval(tx, ctx.config.TEMPORAL_TASK_QUEUE, f));
      await wake(ctx, handOffs);
      return answer;
    },
  }),
};
