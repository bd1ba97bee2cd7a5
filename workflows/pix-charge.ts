import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PixChargeActivities } from '../activities/pix-charges.ts';
import { chargePaid, type ChargeStatus, type PixChargeInput } from './contracts/pix-charge.ts';
import { DATABASE_STEP } from './activity-options.ts';

const activities = proxyActivities<PixChargeActivities>(DATABASE_STEP);

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
