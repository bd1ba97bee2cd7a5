import { Account } from '../accounts/entities.ts';
import { holdForApproval, type Held } from '../approvals/service.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import type { PaymentContext } from './context.ts';
import type { HeldPayment } from './held-payment.ts';

/** Who asks for a payment (null: the account's holder), from which account, under which key. */
export interface Asker {
  tenantId: string;
  accountId: string;
  requesterHolderId: string | null;
  idempotencyKey: string;
}

/** A posting's answer: the payment's own, or APPROVAL_REQUIRED with nothing written, and the payment to hold. */
export type Posted<A> = { answer: A } | { toHold: HeldPayment };

/** A posting can answer APPROVAL_REQUIRED, and dual approval be turned off before the hold reads the account, twice. */
const POSTINGS = 2;

/**
 * Posts a payment (`post`: `settle_tev`, `debit_pix_payout`) and, when its posting finds the account under dual
 * approval on the locked row (APPROVAL_REQUIRED, nothing written), holds it for the account's approver as it is at the
 * hold's commit (`holdForApproval`). Only held payments read the account here; an immediate one never does. When dual
 * approval was turned off in between (the hold finds no approver), nothing is held and the payment is posted again,
 * which now pays it; after a second such turn, TEMPORARILY_UNAVAILABLE, with nothing moved or held.
 */
export async function payOrHold<A>(ctx: PaymentContext, asker: Asker, post: () => Promise<Posted<A>>): Promise<{ answer: A } | { held: Held }> {
  for (let posting = 1; posting <= POSTINGS; posting++) {
    const posted = await post();
    if ('answer' in posted) return posted;
    const source = await ctx.orm.em.fork().findOneOrFail(Account, { id: asker.accountId });
    if (source.approverHolderId === null) continue;
    const { tenantId, requesterHolderId, idempotencyKey } = asker;
    return { held: await holdForApproval(ctx, { tenantId, source, requesterHolderId: requesterHolderId ?? source.holderId!, idempotencyKey, payment: posted.toHold }) };
  }
  throw new DomainError('TEMPORARILY_UNAVAILABLE');
}
payOrHold.raises = refusals(holdForApproval, 'TEMPORARILY_UNAVAILABLE');
