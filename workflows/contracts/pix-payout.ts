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
  /** Provider queries in one run before it continues as new (default `PAYOUT_POLLS_PER_RUN` in the workflow). */
  pollsPerRun?: number;
  /** Only in a run that continues an earlier one: the debit's answer and where the follow-up stopped. */
  resume?: PayoutResume;
}

/** What a run passes to the next one when it continues as new (the debit and submission are never repeated). */
export interface PayoutResume {
  /** Still answers `payoutOpened` (a retried payment request joins whichever run is current). */
  opening: PayoutOpening;
  followUp: PayoutFollowUp;
}

/** A debited payout's follow-up: waiting for the provider to settle it, or watching the settled payout for a refund. */
export type PayoutFollowUp = { phase: 'SETTLING' } | { phase: 'WATCHING_REFUND'; settledAt: string; nextWaitMs: number };

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
