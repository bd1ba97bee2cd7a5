/** Contract of the webhook delivery workflow (`webhook-<eventId>-<webhookId>`): the relay, the workflow and its activities import it. */
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export interface DeliveryInput {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  /** The retry schedule in force when the delivery was enqueued (milliseconds). */
  retry: { initialMs: number; maxMs: number; windowMs: number };
}

export const deliveryWorkflowId = (eventId: string, endpointId: string) => `webhook-${eventId}-${endpointId}`;

/** One run per (event, endpoint); a finished delivery is never started again (redelivery resets it first). */
export function deliveryStart(d: DeliveryInput & { tenantId: string; accountId: string }): WorkflowStart {
  return {
    workflowType: 'webhookDeliveryWorkflow',
    workflowId: deliveryWorkflowId(d.eventId, d.endpointId),
    args: [{ deliveryId: d.deliveryId, eventId: d.eventId, endpointId: d.endpointId, retry: d.retry } satisfies DeliveryInput],
    searchAttributes: { TenantId: d.tenantId, AccountId: d.accountId, EventId: d.eventId, WebhookId: d.endpointId },
    reusePolicy: 'REJECT_DUPLICATE',
  };
}
