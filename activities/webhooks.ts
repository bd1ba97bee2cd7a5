import { deliverDueBatch } from '../src/webhooks/delivery.ts';
import type { ActivityDeps } from './deps.ts';

export function webhookActivities(deps: ActivityDeps) {
  return {
    /** One batch of the endpoint's due deliveries (see `deliverDueBatch`). */
    deliverDueBatch: (endpointId: string) => deliverDueBatch(deps, endpointId),
  };
}
export type WebhookActivities = ReturnType<typeof webhookActivities>;
