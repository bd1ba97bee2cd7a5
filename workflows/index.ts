/** Every workflow the worker registers. Workflow code is deterministic orchestration; side effects are activities. */
export { probeWorkflow } from './probe.ts';
export { onboardingWorkflow } from './onboarding.ts';
export { tevWorkflow } from './tev.ts';
export { webhookEndpointWorkflow } from './webhook-endpoint.ts';
export { approvalWorkflow } from './approval.ts';
export { pixPayoutWorkflow } from './pix-payout.ts';
export { pixChargeRefundWorkflow, pixChargeWorkflow } from './pix-charge.ts';
export { delayedEffectWorkflow } from './delayed-effect.ts';
export { scheduledPaymentWorkflow } from './scheduled-payment.ts';
export { paymentBatchWorkflow } from './payment-batch.ts';
