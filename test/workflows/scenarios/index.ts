/** Every scenario whose histories are checked in (test/workflows/histories), by the name its files start with. */
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { approvalCancelled, approvalDecided, approvalDeciderReplaced, approvalExpires, executedPayout, executedTev, refusedPayout } from './approval.ts';
import { effectApplied, effectCancelled } from './delayed-effect.ts';
import { kycResultFirst, kycThroughThePage } from './onboarding.ts';
import { batchApprovalExpired, batchApproved, batchContinuesAsNew, batchPaid, batchWaitsForPix } from './payment-batch.ts';
import { chargeExpires, chargePaidEarly, refundSent } from './pix-charge.ts';
import {
  payoutFallbackFails,
  payoutFallbackSettles,
  payoutNotified,
  payoutOutlastsRuns,
  payoutUncertainNotified,
  payoutUncertainRejected,
  submittedPayoutAsks,
  submittedPayoutWoken,
} from './pix-payout.ts';
import { probeAnswers } from './probe.ts';
import { occurrencesRun, scheduleCancelled } from './scheduled-payment.ts';
import { outcomeUnknown, sandboxDone, sandboxFailed } from './tev.ts';
import { deliveriesBackOff, wakeEndsIdleWait } from './webhook-endpoint.ts';

export const recordedScenarios: Record<string, (h: WorkflowHarness) => Promise<ScenarioRun<unknown>>> = {
  'approval-expires': approvalExpires,
  'approval-rejected': (h) => approvalDecided(h, false),
  'approval-executes-tev': (h) => approvalDecided(h, true, executedTev()),
  'approval-executes-pix-payout': (h) => approvalDecided(h, true, executedPayout()),
  'approval-payment-refused': (h) => approvalDecided(h, true, refusedPayout()),
  'approval-cancelled': (h) => approvalCancelled(h),
  'approval-decider-replaced': approvalDeciderReplaced,
  'delayed-effect-applied': (h) => effectApplied(h),
  'delayed-effect-cancelled': (h) => effectCancelled(h),
  'onboarding-through-the-page': (h) => kycThroughThePage(h, { approved: true, phone: '+5511987654321' }),
  'onboarding-rejected-first': (h) => kycResultFirst(h, { approved: false, reason: 'Documento ilegível' }),
  'payment-batch-paid': batchPaid,
  'payment-batch-approved': batchApproved,
  'payment-batch-approval-expired': batchApprovalExpired,
  'payment-batch-waits-for-pix': batchWaitsForPix,
  'payment-batch-continues-as-new': batchContinuesAsNew,
  'pix-charge-expires': chargeExpires,
  'pix-charge-paid': chargePaidEarly,
  'pix-charge-refund-sent': refundSent,
  'pix-payout-notified': payoutNotified,
  'pix-payout-fallback-settles': payoutFallbackSettles,
  'pix-payout-fallback-fails': payoutFallbackFails,
  'pix-payout-uncertain-rejected': payoutUncertainRejected,
  'pix-payout-uncertain-notified': payoutUncertainNotified,
  'pix-payout-waits-across-runs': payoutOutlastsRuns,
  'pix-payout-submitted-woken': submittedPayoutWoken,
  'pix-payout-submitted-asks': submittedPayoutAsks,
  probe: probeAnswers,
  'scheduled-payment-runs': (h) => occurrencesRun(h, { dueInMs: [500, 1_000], answers: [['SCHEDULED', 'PAID'], ['FAILED']] }),
  'scheduled-payment-cancelled': scheduleCancelled,
  'scheduled-payment-continues-as-new': (h) => occurrencesRun(h, { dueInMs: [300, 600, 900], roundsPerRun: 2 }),
  'tev-sandbox-done': sandboxDone,
  'tev-sandbox-failed': sandboxFailed,
  'tev-outcome-unknown': outcomeUnknown,
  'webhook-endpoint-backs-off': deliveriesBackOff,
  'webhook-endpoint-woken': wakeEndsIdleWait,
};
