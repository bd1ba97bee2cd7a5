import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PixChargeActivities } from '../activities/pix-charges.ts';
import type { ChargeStatus } from '../src/pix/charges.ts';

export const pixChargeWorkflowId = (chargeId: string) => `pix-charge-${chargeId}`;

/** Sent after a payment commits, so the run ends at once instead of holding its timer until the expiry. */
export const chargePaid = defineSignal('chargePaid');

const activities = proxyActivities<PixChargeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * One run per charge, started at its creation: a durable timer until `expiresAt`, then the charge expires unless it
 * was paid meanwhile. The signal is only a shortcut: if it is lost, the activity finds the charge PAID and leaves it.
 */
export async function pixChargeWorkflow(input: { chargeId: string; expiresAt: string }): Promise<ChargeStatus> {
  let paid = false;
  setHandler(chargePaid, () => {
    paid = true;
  });
  const remaining = Math.max(Date.parse(input.expiresAt) - Date.now(), 1);
  if (await condition(() => paid, remaining)) return 'PAID';
  return activities.expirePixCharge(input.chargeId);
}
