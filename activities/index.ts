import type { ActivityDeps } from './deps.ts';
import { approvalActivities } from './approvals.ts';
import { delayedEffectActivities } from './delayed-effects.ts';
import { onboardingActivities } from './onboarding.ts';
import { paymentBatchActivities } from './payment-batches.ts';
import { pixChargeActivities } from './pix-charges.ts';
import { pixPayoutActivities } from './pix-payouts.ts';
import { probeActivities } from './probe.ts';
import { scheduledPaymentActivities } from './scheduled-payments.ts';
import { tevActivities } from './tev.ts';
import { webhookActivities } from './webhooks.ts';

export function createActivities(deps: ActivityDeps) {
  return { ...probeActivities(deps), ...onboardingActivities(deps), ...tevActivities(deps), ...webhookActivities(deps), ...approvalActivities(deps), ...pixPayoutActivities(deps), ...pixChargeActivities(deps), ...delayedEffectActivities(deps), ...scheduledPaymentActivities(deps), ...paymentBatchActivities(deps) };
}
