import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PixChargeActivities } from '../activities/pix-charges.ts';
import { chargePaid, type ChargeStatus, type PixChargeInput, type PixChargeRefundInput } from './contracts/pix-charge.ts';
import { DATABASE_STEP, PROVIDER_CALL } from './activity-options.ts';

const activities = proxyActivities<PixChargeActivities>(DATABASE_STEP);
const provider = proxyActivities<PixChargeActivities>(PROVIDER_CALL);

/**
 * One run per charge, started at its creation: a durable timer until `expiresAt`, then the charge expires unless it
 * was paid meanwhile. The signal is only a shortcut: if it is lost, the activity finds the charge PAID and leaves it.
 */
export async function pixChargeWorkflow(input: PixChargeInput): Promise<ChargeStatus> {
  let paid = false;
  setHandler(chargePaid, () => {
    paid = true;
  });
  const remaining = Math.max(Date.parse(input.expiresAt) - Date.now(), 1);
  if (await condition(() => paid, remaining)) return 'PAID';
  return activities.expirePixCharge(input.chargeId);
}

/**
 * One run per refund of a charge, started by the refund's transaction: the money left the receiver's account there,
 * and this sends it on to the payer through the provider, retried until the provider takes it (once: by its id).
 */
export async function pixChargeRefundWorkflow(input: PixChargeRefundInput): Promise<'SENT'> {
  await provider.sendPixChargeRefund(input.refundId);
  return 'SENT';
}
