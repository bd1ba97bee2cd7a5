/** Contract of the Pix payout workflow (`pix-payout-<payoutId>`): the api, the workflow and its activities import it. */
import { defineUpdate } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

/** What the payment endpoints answer once the debit is decided. */
export interface PayoutOpening {
  payoutId: string;
  status: 'PROCESSING' | 'REJECTED';
  amountCents: string;
  feeCents: string;
  reason: string | null;
  createdAt: string;
}

export interface PixPayoutInput {
  payoutId: string;
  pollMs: number;
  refundWatchMs: number;
}

/** The payment request waits on this: it returns once the debit is decided (PROCESSING or REJECTED). */
export const payoutOpened = defineUpdate<PayoutOpening>('payoutOpened');

export const pixPayoutWorkflowId = (payoutId: string) => `pix-payout-${payoutId}`;

/** One run per payout; a run that failed or was terminated before finishing may be started again. */
export function pixPayoutStart(p: PixPayoutInput & { tenantId: string; accountId: string }): WorkflowStart {
  return {
    workflowType: 'pixPayoutWorkflow',
    workflowId: pixPayoutWorkflowId(p.payoutId),
    args: [{ payoutId: p.payoutId, pollMs: p.pollMs, refundWatchMs: p.refundWatchMs } satisfies PixPayoutInput],
    searchAttributes: { TenantId: p.tenantId, AccountId: p.accountId, PayoutId: p.payoutId },
    reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  };
}
