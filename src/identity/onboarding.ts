import type { Client } from '@temporalio/client';
import { SearchAttributes } from '../temporal/search-attributes.ts';
import { kycPageOpened, kycResultReceived, onboardingWorkflowId, type KycResult } from '../../workflows/onboarding.ts';
import type { Holder } from './entities.ts';

/**
 * Starting and signalling go through signal-with-start, so a holder whose run could not be started at registration
 * (Temporal briefly unreachable) gets it the first time the KYC page is opened.
 */
function startOptions(holder: Holder, taskQueue: string) {
  return {
    taskQueue,
    workflowId: onboardingWorkflowId(holder.id),
    // A finished onboarding is never started again.
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    args: [{ tenantId: holder.tenantId, holderId: holder.id }] as [{ tenantId: string; holderId: string }],
    typedSearchAttributes: [
      { key: SearchAttributes.TenantId, value: holder.tenantId },
      { key: SearchAttributes.HolderId, value: holder.id },
    ],
  };
}

export async function startOnboarding(client: Client, taskQueue: string, holder: Holder): Promise<void> {
  await client.workflow.start('onboardingWorkflow', { ...startOptions(holder, taskQueue), workflowIdConflictPolicy: 'USE_EXISTING' });
}

export async function signalKycPageOpened(client: Client, taskQueue: string, holder: Holder): Promise<void> {
  await client.workflow.signalWithStart('onboardingWorkflow', { ...startOptions(holder, taskQueue), signal: kycPageOpened, signalArgs: [] });
}

export async function signalKycResult(client: Client, taskQueue: string, holder: Holder, result: KycResult): Promise<void> {
  await client.workflow.signalWithStart('onboardingWorkflow', { ...startOptions(holder, taskQueue), signal: kycResultReceived, signalArgs: [result] });
}
