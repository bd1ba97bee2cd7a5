import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { DelayedEffectActivities } from '../activities/delayed-effects.ts';
import { effectCancelled, type DelayedEffectInput, type DelayedEffectOutcome } from './contracts/delayed-effect.ts';
import { DATABASE_STEP } from './activity-options.ts';

const activities = proxyActivities<DelayedEffectActivities>(DATABASE_STEP);

/**
 * One run per change that takes effect later (a contact becoming trusted, a limit increase): a durable timer until
 * `effectiveAt`, then the change applied once by its module's use case, which reads the record under lock and applies
 * it only if it is still pending (so a retried or replayed step, or a worker restarted in the middle, applies nothing
 * twice). The `effectCancelled` signal ends the wait at once; it is only a shortcut, since the apply finds a cancelled,
 * removed or replaced record itself and answers CANCELLED.
 */
export async function delayedEffectWorkflow(input: DelayedEffectInput): Promise<DelayedEffectOutcome> {
  let cancelled = false;
  setHandler(effectCancelled, () => {
    cancelled = true;
  });
  const remaining = Math.max(Date.parse(input.effectiveAt) - Date.now(), 1);
  if (await condition(() => cancelled, remaining)) return 'CANCELLED';
  return activities.applyDelayedEffect(input.kind, input.recordId);
}
