import { Account } from '../accounts/entities.ts';
import { command, presentFlag } from '../admin/command.ts';
import { Holder } from '../identity/entities.ts';
import { digitsDocument } from '../identity/schemas.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { z } from '../shared/zod.ts';

export const approvalCommands = {
  'account:dual-approval': command({
    summary: "Require an approver's approval for every payment from an account (another ACTIVE holder of the tenant), or --off",
    usage: '--account A (--approver-document D | --off)',
    flags: z.object({ account: z.uuid(), 'approver-document': digitsDocument.optional(), off: presentFlag }),
    async run({ em }, f) {
      const account = await em.findOne(Account, { id: f.account, kind: 'HOLDER' });
      if (!account) throw notFound('Account');
      if (f.off) {
        account.approverHolderId = null;
      } else {
        if (!f['approver-document']) throw new AppError(400, 'USAGE_ERROR', 'Give --approver-document D, or --off');
        const approver = await em.findOne(Holder, { tenantId: account.tenantId, document: f['approver-document'] });
        if (!approver) throw notFound('Approver holder in the account tenant');
        if (approver.id === account.holderId) throw new AppError(400, 'INVALID_APPROVER', "The approver must be another holder than the account's own");
        if (approver.status !== 'ACTIVE') throw new AppError(400, 'INVALID_APPROVER', 'The approver must be an ACTIVE holder');
        account.approverHolderId = approver.id;
      }
      await em.flush();
      return { accountId: account.id, dualApproval: account.approverHolderId ? { approverHolderId: account.approverHolderId } : null };
    },
  }),
};
