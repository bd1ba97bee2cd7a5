/**
 * Contract of the delayed-effect workflow (`delayed-effect-<kind>-<recordId>`): a change a holder asked for that the
 * rules let take effect only after a wait (a trusted contact counts 24 h after it is added; a limit increase, 24 to 48
 * h after its request). The api, the workflow and its activities import it; free of side effects.
 *
 * The change is recorded in PostgreSQL first, with this workflow's hand-off in the same transaction; the run waits
 * on a durable timer until `effectiveAt`, then applies the change once through the activity, which dispatches by
 * `kind` to the use case of the module that owns the record (activities/delayed-effects.ts). A new kind is a value
 * here and its apply there (the compiler asks for it). Every kind's record is found in the Temporal UI by
 * `AccountId` and `DelayedEffectId`, its record's id.
 */
import { defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export const DELAYED_EFFECT_KINDS = ['TRUSTED_CONTACT', 'LIMIT_INCREASE'] as const;
export type DelayedEffectKind = (typeof DELAYED_EFFECT_KINDS)[number];

export interface DelayedEffectInput {
  kind: DelayedEffectKind;
  /** The id of the record the change is written on (the contact, the limit request). */
  recordId: string;
  /** ISO 8601: when the change takes effect. The rules' wait in production; tests give a moment from now. */
  effectiveAt: string;
}

/**
 * APPLIED: the change is in force (applied now, or found applied by an earlier attempt). CANCELLED: it will not be:
 * the record was cancelled, removed or replaced before it took effect (found by the signal or by the apply itself).
 */
export type DelayedEffectOutcome = 'APPLIED' | 'CANCELLED';

/** Sent (through the hand-off) once the record's cancellation committed: the run ends without applying anything. */
export const effectCancelled = defineSignal('effectCancelled');

const kebab = (kind: DelayedEffectKind) => kind.toLowerCase().replaceAll('_', '-');

export const delayedEffectWorkflowId = (kind: DelayedEffectKind, recordId: string) => `delayed-effect-${kebab(kind)}-${recordId}`;

export interface DelayedEffectRun {
  kind: DelayedEffectKind;
  recordId: string;
  tenantId: string;
  accountId: string;
  effectiveAt: string;
}

/** One run per record, handed off with it; a finished run (applied or cancelled) is never started again. */
export function delayedEffectStart(r: DelayedEffectRun): WorkflowStart {
  return {
    workflowType: 'delayedEffectWorkflow',
    workflowId: delayedEffectWorkflowId(r.kind, r.recordId),
    args: [{ kind: r.kind, recordId: r.recordId, effectiveAt: r.effectiveAt } satisfies DelayedEffectInput],
    searchAttributes: { TenantId: r.tenantId, AccountId: r.accountId, DelayedEffectId: r.recordId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}

/**
 * Ends the run of a cancelled (or replaced) record: a run not started yet starts and ends at once, an ended one
 * stays ended. Recorded in the cancellation's transaction, like the start.
 */
export const delayedEffectCancelledWake = (r: DelayedEffectRun): WorkflowStart => ({ ...delayedEffectStart(r), signal: { name: effectCancelled.name, args: [] } });
