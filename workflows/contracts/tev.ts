/**
 * Contract of the TEV resolution workflow (`tev-<tevId>`), shared by the api, the workflow and its activities.
 * Free of side effects: the workflow bundle imports it too.
 */
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

/** BATCH: an item of a batch payout, authorized (and approved, under dual approval) with its batch as a whole. */
export type TevOrigin = 'HOLDER_API' | 'INTEGRATION_API' | 'APPROVAL' | 'BATCH';

/** One transfer as its caller asked for it: enough to settle it from nothing, idempotently by `tevId`. */
export interface TevSubmission {
  tevId: string;
  tenantId: string;
  sourceAccountId: string;
  destination: { accountId: string } | { branch: string; account: string };
  /** Cents, as text (workflow inputs are JSON). */
  amountCents: string;
  description: string | null;
  externalRef: string | null;
  endToEndId: string;
  idempotencyKey: string;
  origin: TevOrigin;
}

/** A resolved transfer, as the create response and the approval request report it. */
export interface TevOutcome {
  tevId: string;
  status: 'DONE' | 'FAILED';
  amountCents: string;
  /** The send fee debited from the source (0 when rejected). */
  feeCents: string;
  reason: string | null;
  resolvedAt: string;
}

/** Sandbox: the outcome that an amount ending in ,97 (DONE) or ,98 (FAILED) produces, some seconds after the request. */
export interface SandboxTevOutcome {
  delayMs: number;
  outcome: 'DONE' | 'FAILED';
}

export interface TevResolutionInput {
  submission: TevSubmission;
  sandbox: SandboxTevOutcome | null;
}

export const tevWorkflowId = (tevId: string) => `tev-${tevId}`;

/** Only a transfer whose outcome was not known in time gets a run; a failed run may be started again. */
export function tevResolutionStart(input: TevResolutionInput): WorkflowStart {
  const { submission: s } = input;
  return {
    workflowType: 'tevWorkflow',
    workflowId: tevWorkflowId(s.tevId),
    args: [input],
    searchAttributes: { TenantId: s.tenantId, AccountId: s.sourceAccountId, TevId: s.tevId },
    reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  };
}
