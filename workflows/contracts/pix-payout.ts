/** Contract of the Pix payout workflow (`pix-payout-<payoutId>`): the api, the workflow and its activities import it. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';
import type { PayoutChannel, PayoutQr } from '../../src/pix/payout-store.ts';
import type { PixKeyType } from '../../src/pix/keys.ts';
import type { Beneficiary } from '../../src/pix/provider.ts';

/** What the payment endpoints answer once the debit is decided. */
export interface PayoutOpening {
  payoutId: string;
  status: 'PROCESSING' | 'REJECTED';
  amountCents: string;
  feeCents: string;
  reason: string | null;
  createdAt: string;
}

/**
 * A payment request as the debit takes it, as plain data: the request debits it in its own transaction; only when it
 * cannot tell whether that transaction committed does the workflow run the same debit (idempotent by `payoutId`).
 */
export interface PayoutDebit {
  payoutId: string;
  tenantId: string;
  accountId: string;
  channel: PayoutChannel;
  amountCents: string;
  pixKey: string;
  pixKeyType: PixKeyType;
  /** As stored on the payout: the document as the payer may see it. */
  beneficiary: Beneficiary;
  qr: PayoutQr | null;
  description: string;
  idempotencyKey: string;
  requestHash: string;
}

export interface PixPayoutInput {
  payoutId: string;
  /** How long the run waits for the provider's notification before it asks the provider instead (the fallback). */
  notificationWaitMs?: number;
  /** The longest wait between two fallback queries: after a few at `notificationWaitMs`, the waits double up to it. */
  longestWaitMs?: number;
  /** Only when the request could not tell whether its debit committed: the run debits first, idempotently. */
  debit?: PayoutDebit;
  /**
   * The hand-off submitted the payout before it started the run, with the run's first task delayed by
   * `notificationWaitMs` (`submittedPayoutStart`): the provider's notification wakes it (signal-with-start), and the
   * end of the delay, when no notification came, is the time of the first fallback query.
   */
  submitted?: boolean;
  /** A run that continues an earlier one: the payout was submitted, and the provider asked this many times. */
  waiting?: { asks: number };
  /** Runs started before the payout waited for notifications: how often they polled, and how long they watched a refund. */
  pollMs?: number;
  refundWatchMs?: number;
  /** Provider queries in one run before it continues as new (default `PAYOUT_POLLS_PER_RUN` in the workflow). */
  pollsPerRun?: number;
  /** Only in a run that continues an earlier one that polled: the debit's answer and where the follow-up stopped. */
  resume?: PayoutResume;
}

/** What a polling run passes to the next one when it continues as new (the debit and submission are never repeated). */
export interface PayoutResume {
  /** Still answers `payoutOpened` (a retried payment request joins whichever run is current). */
  opening: PayoutOpening;
  followUp: PayoutFollowUp;
}

/** A debited payout's follow-up: waiting for the provider to settle it, or watching the settled payout for a refund. */
export type PayoutFollowUp = { phase: 'SETTLING' } | { phase: 'WATCHING_REFUND'; settledAt: string; nextWaitMs: number };

/** Runs started before the debit moved into the request: the payment request waited on this for the debit. */
export const payoutOpened = defineUpdate<PayoutOpening>('payoutOpened');

/** Where a payout ends. */
export type PayoutFinalState = 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

/**
 * Sent once a provider's notification made the payout final in the database: the run has nothing left to do and ends.
 * A lost signal only means the run asks the provider after `notificationWaitMs` and finds the same outcome applied.
 */
export const payoutFinal = defineSignal<[PayoutFinalState]>('payoutFinal');

export const pixPayoutWorkflowType = 'pixPayoutWorkflow';
export const pixPayoutWorkflowId = (payoutId: string) => `pix-payout-${payoutId}`;

export interface PayoutTiming {
  notificationWaitMs: number;
  longestWaitMs: number;
}

/**
 * The start of a payout's run once the hand-off has submitted the payout: its first workflow task waits for the
 * notification's wake or `notificationWaitMs`, so a payout settled by its notification costs the run one task.
 */
export function submittedPayoutStart(start: WorkflowStart): WorkflowStart {
  const input = start.args[0] as PixPayoutInput;
  return { ...start, args: [{ ...input, submitted: true } satisfies PixPayoutInput], ...(input.notificationWaitMs ? { startDelayMs: input.notificationWaitMs } : {}) };
}

/**
 * The wake of a payout's run by a notification that made the payout final: signal-with-start, so that a run whose
 * first task is delayed runs now (a plain signal would wait for the delay), and a run not started yet (the
 * notification came before the hand-off's start) starts, finds the payout final and ends.
 */
export function payoutWake(p: { payoutId: string; tenantId: string; accountId: string; timing: PayoutTiming; state: PayoutFinalState }): WorkflowStart {
  const { startDelayMs: _delay, ...start } = submittedPayoutStart(pixPayoutStart(p));
  return { ...start, signal: { name: payoutFinal.name, args: [p.state] } };
}

/** One run per payout; a run that failed or was terminated before finishing may be started again. */
export function pixPayoutStart(p: { payoutId: string; tenantId: string; accountId: string; timing: PayoutTiming; debit?: PayoutDebit }): WorkflowStart {
  const input: PixPayoutInput = { payoutId: p.payoutId, ...p.timing, ...(p.debit ? { debit: p.debit } : {}) };
  return {
    workflowType: pixPayoutWorkflowType,
    workflowId: pixPayoutWorkflowId(p.payoutId),
    args: [input],
    searchAttributes: { TenantId: p.tenantId, AccountId: p.accountId, PayoutId: p.payoutId },
    reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  };
}
