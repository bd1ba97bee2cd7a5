/** Contract of the charge expiry workflow (`pix-charge-<chargeId>`): the api, the workflow and its activities import it. */
import { defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export const CHARGE_STATUSES = ['ACTIVE', 'PAID', 'EXPIRED'] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

export interface PixChargeInput {
  chargeId: string;
  expiresAt: string;
}

/** Sent after a payment commits, so the run ends at once instead of holding its timer until the expiry. */
export const chargePaid = defineSignal('chargePaid');

export const pixChargeWorkflowId = (chargeId: string) => `pix-charge-${chargeId}`;

/** One run per charge, started with it; a finished run (paid or expired) is never started again. */
export function pixChargeStart(c: { chargeId: string; tenantId: string; accountId: string; expiresAt: string }): WorkflowStart {
  return {
    workflowType: 'pixChargeWorkflow',
    workflowId: pixChargeWorkflowId(c.chargeId),
    args: [{ chargeId: c.chargeId, expiresAt: c.expiresAt } satisfies PixChargeInput],
    searchAttributes: { TenantId: c.tenantId, AccountId: c.accountId, ChargeId: c.chargeId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}

export interface PixChargeRefundInput {
  refundId: string;
}

export const pixChargeRefundWorkflowId = (refundId: string) => `pix-charge-refund-${refundId}`;

/** One run per refund, recorded with it: the refund's devolução goes to the payer's institution through the provider. */
export function pixChargeRefundStart(r: { refundId: string; chargeId: string; tenantId: string; accountId: string }): WorkflowStart {
  return {
    workflowType: 'pixChargeRefundWorkflow',
    workflowId: pixChargeRefundWorkflowId(r.refundId),
    args: [{ refundId: r.refundId } satisfies PixChargeRefundInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, ChargeId: r.chargeId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}
