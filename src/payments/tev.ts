import type { Held } from '../approvals/service.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { checkPin } from '../identity/pin.ts';
import { refusals } from '../shared/errors.ts';
import { submitTev, type TevAnswer, type TevRequest } from '../transfers/service.ts';
import type { PaymentContext } from './context.ts';
import type { HeldPayment } from './held-payment.ts';
import { payOrHold } from './hold.ts';

/** A TEV request's outcome: settled (or not known in time), or held for the account's approver. */
export type TevPaymentAnswer = { held: Held } | { result: TevAnswer };

/**
 * A TEV, paid now or held: `settle_tev` decides in its one transaction, under the source account's lock, whether the
 * account is under dual approval (APPROVAL_REQUIRED, nothing recorded), so an immediate TEV makes one round trip. A
 * held TEV is recorded for the account's approver, as requested by the account's holder (`payOrHold`).
 */
export async function payTev(ctx: PaymentContext, request: TevRequest): Promise<TevPaymentAnswer> {
  const { tenantId, sourceAccountId: accountId, idempotencyKey } = request;
  const paid = await payOrHold<TevAnswer>(ctx, { tenantId, accountId, requesterHolderId: null, idempotencyKey }, async () => {
    const result = await submitTev(ctx, request);
    if (result.kind !== 'approval_required') return { answer: result };
    const toHold: HeldPayment = { kind: 'TEV', destinationAccountId: result.destinationAccountId, amountCents: request.amountCents.toString(), description: request.description, externalRef: request.externalRef };
    return { toHold };
  });
  return 'held' in paid ? paid : { result: paid.answer };
}
payTev.raises = refusals(submitTev, payOrHold);

/** A holder's TEV: the PIN first (as for a Pix payment), then paid now or held. */
export async function payTevAsHolder(ctx: PaymentContext, auth: HolderAuth, pin: string | undefined, request: TevRequest): Promise<TevPaymentAnswer> {
  await checkPin(auth, ctx.config, pin);
  return payTev(ctx, request);
}
// A holder's TEV carries no externalRef: settle_tev cannot refuse it EXTERNAL_REF_TAKEN.
payTevAsHolder.raises = refusals(checkPin, ...payTev.raises.filter((refusal) => refusal !== 'EXTERNAL_REF_TAKEN'));
