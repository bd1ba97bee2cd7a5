/**
 * Contract of the scheduled-payment workflow (`scheduled-payment-<scheduleId>`): one run (continued as new now and
 * then) per schedule, for as long as it has occurrences to run. The api, the workflow and its activities import it;
 * free of side effects.
 *
 * The schedule and every occurrence are recorded in PostgreSQL with this workflow's hand-off, in one transaction.
 * PostgreSQL is the truth: the run reads the earliest occurrence still to run, sleeps on a durable timer until it is
 * due (or its retry is), runs it through the activity, and reads again. A cancellation is recorded first and then
 * wakes the run (`scheduleChanged`, signal-with-start through the hand-off), which reads again.
 */
import { defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

/**
 * SCHEDULED: to run at its due time (or at its retry's). RUNNING: an attempt is under way. PAID: the TEV settled, or
 * the Pix was debited (its payout then settles like any other). HELD_FOR_APPROVAL: the account is under dual
 * approval, and the request waits for its approver. FAILED: refused (after its retries, for insufficient balance).
 * CANCELLED: by the holder, alone or with the whole schedule.
 */
export type OccurrenceStatus = 'SCHEDULED' | 'RUNNING' | 'PAID' | 'HELD_FOR_APPROVAL' | 'FAILED' | 'CANCELLED';

/** How an occurrence is run: the retries for insufficient balance, and when a start counts as late. */
export interface OccurrencePolicy {
  /** Retries after a refusal for insufficient balance, each `retryIntervalMs` after the last, within the occurrence's São Paulo day. */
  retries: number;
  retryIntervalMs: number;
  /** An occurrence whose first attempt starts more than this after its due time is recorded `late`. */
  lateAfterMs: number;
}

export interface ScheduledPaymentInput {
  scheduleId: string;
  tenantId: string;
  policy: OccurrencePolicy;
  /** Occurrence rounds (a wait and an attempt) a run makes before it continues as new. */
  roundsPerRun: number;
}

/** FINISHED: every occurrence ran (or was cancelled alone). CANCELLED: the schedule was cancelled whole. */
export type ScheduledPaymentOutcome = 'FINISHED' | 'CANCELLED';

/** What the run reads before each wait: the earliest occurrence still to run, none when every one is done. */
export interface NextOccurrence {
  cancelled: boolean;
  next: { date: string; runAt: string } | null;
}

/** Sent (through the hand-off) once a cancellation committed: the run reads its schedule again. */
export const scheduleChanged = defineSignal('scheduleChanged');

export const scheduledPaymentWorkflowId = (scheduleId: string) => `scheduled-payment-${scheduleId}`;

/** A round of waiting and running is a dozen history events: a run keeps its history small. */
export const ROUNDS_PER_RUN = 50;

export interface ScheduledPaymentRun {
  scheduleId: string;
  tenantId: string;
  accountId: string;
  policy: OccurrencePolicy;
}

/** One run per schedule, handed off with it; a finished run is never started again. */
export function scheduledPaymentStart(r: ScheduledPaymentRun): WorkflowStart {
  return {
    workflowType: 'scheduledPaymentWorkflow',
    workflowId: scheduledPaymentWorkflowId(r.scheduleId),
    args: [{ scheduleId: r.scheduleId, tenantId: r.tenantId, policy: r.policy, roundsPerRun: ROUNDS_PER_RUN } satisfies ScheduledPaymentInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, ScheduleId: r.scheduleId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}

/** Wakes the run of a schedule that changed (cancelled whole, or an occurrence of it); a run not started yet starts. */
export const scheduleChangedWake = (r: ScheduledPaymentRun): WorkflowStart => ({ ...scheduledPaymentStart(r), signal: { name: scheduleChanged.name, args: [] } });
