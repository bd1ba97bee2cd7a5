import { command, CommandError, presentFlag } from '../cli/command.ts';
import { digitsDocument } from '../identity/schemas.ts';
import { z } from '../shared/zod.ts';
import { setDualApproval } from './dual-approval.ts';

export const approvalCommands = {
  'account:dual-approval': command({
    summary:
      "Require an approver's approval for every payment from an account (another ACTIVE holder of the tenant), or --off. Pending requests follow: they move to the new approver, or are cancelled",
    usage: '--account A (--approver-document D | --off)',
    // The use case commits its change before it wakes the cancelled requests' runs.
    transactional: false,
    flags: z.object({ account: z.uuid(), 'approver-document': digitsDocument.optional(), off: presentFlag }),
    async run(ctx, flags) {
      // --off wins over a document given with it.
      const approverDocument = flags.off ? null : flags['approver-document'];
      if (approverDocument === undefined) throw new CommandError('USAGE_ERROR', 'Give --approver-document D, or --off');
      return setDualApproval(ctx, { accountId: flags.account, approverDocument });
    },
  }),
};
