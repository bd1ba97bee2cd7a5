import { Account } from '../accounts/entities.ts';
import { holdForApproval, type Held } from '../approvals/service.ts';
import { refusals } from '../shared/errors.ts';
import type { PaymentContext } from './context.ts';
import type { HeldPayment } from './held-payment.ts';

/** A payment its posting answered APPROVAL_REQUIRED: who asked for it (null: the account's holder), under which key. */
export interface AskedApproval {
  tenantId: string;
  accountId: string;
  requesterHolderId: string | null;
  idempotencyKey: string;
  payment: HeldPayment;
}

/**
 * Holds a payment that its posting (`settle_tev`, `debit_pix_payout`) refused APPROVAL_REQUIRED, having found its
 * account under dual approval on the locked row, with nothing written: recorded for the account's approver as it is
 * at the hold's commit (`holdForApproval`). Only held payments read the account here; an immediate one never does.
 */
export async function holdAskedApproval(ctx: PaymentContext, asked: AskedApproval): Promise<Held> {
  const source = await ctx.orm.em.fork().findOneOrFail(Account, { id: asked.accountId });
  return holdForApproval(ctx, {
    tenantId: asked.tenantId,
    source,
    requesterHolderId: asked.requesterHolderId ?? source.holderId!,
    idempotencyKey: asked.idempotencyKey,
    payment: asked.payment,
  });
}
holdAskedApproval.raises = refusals(holdForApproval);
