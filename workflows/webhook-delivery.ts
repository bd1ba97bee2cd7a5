import { CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.ts';
import type { DeliveryInput } from './contracts/webhook-delivery.ts';
import { WEBHOOK_ATTEMPT } from './activity-options.ts';

const { attemptDelivery, finishDelivery } = proxyActivities<WebhookActivities>(WEBHOOK_ATTEMPT);

/**
 * Delivers one event to one endpoint: an attempt (which first checks the endpoint is still enabled), then durable
 * timers doubling from `initialMs` up to `maxMs`, until a 2xx or until `windowMs` has passed since the first attempt.
 * Cancelling the run (endpoint deleted) stops it between attempts.
 */
export async function webhookDeliveryWorkflow(input: DeliveryInput): Promise<'DELIVERED' | 'FAILED' | 'CANCELLED'> {
  const started = Date.now();
  let delay = input.retry.initialMs;
  try {
    for (let attempt = 1; ; attempt++) {
      const result = await attemptDelivery(input.deliveryId, attempt);
      if (result !== 'RETRY') return result;
      if (Date.now() - started + delay > input.retry.windowMs) {
        await finishDelivery(input.deliveryId, 'FAILED');
        return 'FAILED';
      }
      await sleep(delay);
      delay = Math.min(delay * 2, input.retry.maxMs);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => finishDelivery(input.deliveryId, 'CANCELLED'));
    return 'CANCELLED';
  }
}
