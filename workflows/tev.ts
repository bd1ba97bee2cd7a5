import { proxyActivities, sleep } from '@temporalio/workflow';
import type { TevActivities } from '../activities/tev.ts';
import type { TevOutcome, TevResolutionInput } from './contracts/tev.ts';
import { DATABASE_STEP } from './activity-options.ts';

// Retried until the database answers: the settlement is idempotent by tevId.
const { resolveTev } = proxyActivities<TevActivities>(DATABASE_STEP);

/**
 * Resolves one transfer whose outcome was not known in time (a lost connection, a statement timeout, the response
 * deadline, or the sandbox's ,97 and ,98): settles it, or reads how it settled, and leaves it DONE or FAILED.
 */
export async function tevWorkflow(input: TevResolutionInput): Promise<TevOutcome> {
  if (input.sandbox) await sleep(input.sandbox.delayMs);
  return resolveTev(input);
}
