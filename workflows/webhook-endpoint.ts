import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.ts';
import { WEBHOOK_BATCH } from './activity-options.ts';
import { wake, type EndpointDeliveryInput } from './contracts/webhook-endpoint.ts';

const { deliverDueBatch } = proxyActivities<WebhookActivities>(WEBHOOK_BATCH);

/** With nothing pending, the run still looks once an hour (a lost wake costs at most that). */
const IDLE_MS = 3_600_000;
/** Batches per run before continue-as-new keeps the history short. */
const BATCHES_PER_RUN = 500;

/**
 * Delivers one endpoint's events: a batch of its due deliveries (claimed, sent concurrently, every attempt recorded,
 * failures given their next attempt time), then a sleep until the earliest retry is due or a wake arrives. Ends when
 * the endpoint is deleted. Its own concurrency is all an endpoint that fails or hangs can use.
 */
export async function webhookEndpointWorkflow(input: EndpointDeliveryInput): Promise<'DELETED'> {
  let woken = false;
  setHandler(wake, () => {
    woken = true;
  });
  for (let batch = 0; batch < BATCHES_PER_RUN && !workflowInfo().continueAsNewSuggested; batch++) {
    woken = false;
    const outcome = await deliverDueBatch(input.endpointId);
    if (!outcome.endpointEnabled) return 'DELETED';
    if (outcome.moreDue) continue;
    await condition(() => woken, Math.max(outcome.nextDueInMs ?? IDLE_MS, 1));
  }
  return continueAsNew<typeof webhookEndpointWorkflow>(input);
}
