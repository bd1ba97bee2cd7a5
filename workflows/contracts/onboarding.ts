/** Contract of the KYC onboarding workflow (`onboarding-<holderId>`): the api, the workflow and its activities import it. */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export interface OnboardingInput {
  tenantId: string;
  holderId: string;
}

export interface KycResult {
  approved: boolean;
  reason?: string;
  /** E.164 phone confirmed during KYC. */
  phone?: string;
  /** Companies: the partner (owner) who answered for the company. */
  partner?: { name: string; document: string };
}

export type OnboardingState = 'WAITING_FOR_KYC' | 'IN_PROGRESS' | 'APPROVED' | 'REJECTED';

/** Sent when the holder opens the KYC page (the provider's, or the sandbox page). */
export const kycPageOpened = defineSignal('kycPageOpened');
/** Sent with the KYC decision. */
export const kycResultReceived = defineSignal<[KycResult]>('kycResultReceived');
export const onboardingState = defineQuery<OnboardingState>('onboardingState');

export const onboardingWorkflowId = (holderId: string) => `onboarding-${holderId}`;

/**
 * One run per holder, started at registration; the KYC page's signals use signal-with-start, so they also start a run
 * that is missing. A finished onboarding is never started again.
 */
export function onboardingStart(holder: { id: string; tenantId: string }, signal?: { name: string; args: unknown[] }): WorkflowStart {
  return {
    workflowType: 'onboardingWorkflow',
    workflowId: onboardingWorkflowId(holder.id),
    args: [{ tenantId: holder.tenantId, holderId: holder.id } satisfies OnboardingInput],
    searchAttributes: { TenantId: holder.tenantId, HolderId: holder.id },
    reusePolicy: 'REJECT_DUPLICATE',
    ...(signal ? { signal } : {}),
  };
}
