import { proxyActivities, sleep } from '@temporalio/workflow';
import type { TevActivities } from '../activities/tev.ts';
import type { TevOutcome, TevResolutionInput } from './contracts/tev.ts';

const { resolveTev } = proxyActivities<TevActivities>({
  startToCloseTimeout: '30 seconds',
  // Retried until the database answers: the settlement is idempotent by tevId.
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * Resolves one transfer whose outcome was not known in time (a lost connection, a statement timeout, the response
 * deadline, or the sandbox's ,97 and ,98): settles it, or reads how it settled, and leaves it DONE or FAILED.
 */
export async function tevWorkflow(input: TevResolutionInput): Promise<TevOutcome> {
  if (input.sandbox) await sleep(input.sandbox.delayMs);
  return resolveTev(input);
}
