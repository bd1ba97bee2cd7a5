/**
 * Contract of the webhook endpoint workflow (`webhook-endpoint-<webhookId>`): one long-running run per endpoint
 * delivers its due deliveries in batches. The relay, the api, the workflow and its activities import it.
 */
import { defineSignal } from '@temporalio/workflow';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export interface EndpointDeliveryInput {
  endpointId: string;
  tenantId: string;
  accountId: string;
}

/** What one batch did, and when the endpoint needs the workflow again. */
export interface BatchOutcome {
  /** False once the endpoint is deleted: the run ends. */
  endpointEnabled: boolean;
  attempted: number;
  /** Due deliveries are left (the batch was full): the next batch runs at once. */
  moreDue: boolean;
  /** Until the earliest retry is due; null when nothing is pending. */
  nextDueInMs: number | null;
}

/** New deliveries, or a redelivery: look now (sent once per relay batch and endpoint, not once per event). */
export const wake = defineSignal('wake');

export const webhookEndpointWorkflowId = (endpointId: string) => `webhook-endpoint-${endpointId}`;

/**
 * A wake of the endpoint's run, starting it if needed (signal-with-start). A run that ended because the endpoint was
 * deleted is not started again; one that failed may be.
 */
export function webhookEndpointWake(e: EndpointDeliveryInput): WorkflowStart {
  return {
    workflowType: 'webhookEndpointWorkflow',
    workflowId: webhookEndpointWorkflowId(e.endpointId),
    args: [{ endpointId: e.endpointId, tenantId: e.tenantId, accountId: e.accountId } satisfies EndpointDeliveryInput],
    searchAttributes: { TenantId: e.tenantId, AccountId: e.accountId, WebhookId: e.endpointId },
    reusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    signal: { name: wake.name, args: [] },
  };
}
