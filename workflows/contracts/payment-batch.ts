/**
 * Contract of the batch payout workflow (`payment-batch-<batchId>`): the api, the workflow and its activities import
 * it. Free of side effects: the workflow bundle imports it too.
 *
 * The batch and its items are recorded in PostgreSQL first, with this workflow's hand-off in the same transaction.
 * The run starts the batch when it may (at once, or once its approval is decided), then pays its items step by step,
 * a chunk of each kind per step in one transaction, each item through the posting functions of an immediate payment
 * under its own payout id; it waits while `pixInFlight` of its Pix are debited and not final, and ends when every
 * item is. Every state is in the database: a step retried, replayed or run by another worker pays nothing twice.
 */
import { defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

/** Where a batch stands: held for approval, waiting to start, paying, or one of its ends. */
export type BatchStatus = 'AWAITING_APPROVAL' | 'PENDING' | 'PROCESSING' | BatchFinalStatus;

/**
 * FINISHED: every item was paid, failed, invalid, or cancelled mid-batch. CANCELLED: before it started. REJECTED: its
 * approval was rejected, expired or cancelled. REFUSED: its total with fees was not available when it started.
 */
export type BatchFinalStatus = 'FINISHED' | 'CANCELLED' | 'REJECTED' | 'REFUSED';

export interface PaymentBatchInput {
  batchId: string;
  /** Items of one kind one step pays in one transaction. */
  chunkSize: number;
  /** The most of the batch's Pix debited and not final yet: its share of the payout workflows. */
  pixInFlight: number;
  /** How long a step that paid nothing waits before the next (Pix in flight); a wake ends the wait. */
  waitMs?: number;
  /** Steps in one run before it continues as new (default `STEPS_PER_RUN` in the workflow). */
  stepsPerRun?: number;
  /** A run that continues an earlier one: the batch has started. */
  started?: boolean;
}

/** What the batch's start came to: pay it, wait (held for its approval) until `until` or a wake, or it has ended. */
export type BatchStart = { kind: 'PAY' } | { kind: 'WAIT'; until: string } | { kind: 'CLOSED'; status: BatchFinalStatus };

/** One step: the items it paid (or refused), the Pix still waiting for the provider, and the batch's end when it ended. */
export interface BatchProgress {
  paid: number;
  processing: number;
  finished: BatchFinalStatus | null;
}

/**
 * Sent (through the hand-off) when the batch changed in the database: its approval decided, its items cancelled. The
 * run looks again at once; the database says what changed.
 */
export const batchWoken = defineSignal('batchWoken');

export const paymentBatchWorkflowId = (batchId: string) => `payment-batch-${batchId}`;

export interface PaymentBatchRun {
  batchId: string;
  tenantId: string;
  accountId: string;
  chunkSize: number;
  pixInFlight: number;
}

/** One run per batch, handed off with it; a run that failed may be started again, it reads where the batch stands. */
export function paymentBatchStart(r: PaymentBatchRun): WorkflowStart {
  return {
    workflowType: 'paymentBatchWorkflow',
    workflowId: paymentBatchWorkflowId(r.batchId),
    args: [{ batchId: r.batchId, chunkSize: r.chunkSize, pixInFlight: r.pixInFlight } satisfies PaymentBatchInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, BatchId: r.batchId },
    reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  };
}

/** Wakes the batch's run (signal-with-start: a run not started yet starts, an ended one stays ended). */
export const paymentBatchWake = (r: PaymentBatchRun): WorkflowStart => ({ ...paymentBatchStart(r), signal: { name: batchWoken.name, args: [] } });
