import { allHandlersFinished, condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { TevActivities } from '../activities/tev.ts';

export interface TevOutcome {
  tevId: string;
  status: 'DONE' | 'FAILED';
  amountCents: string;
  /** The send fee debited from the source (0 when rejected). */
  feeCents: string;
  reason: string | null;
  resolvedAt: string;
}

/** The HTTP request waits on this update: it returns as soon as the posting commits (early return). */
export const tevOutcome = defineUpdate<TevOutcome>('tevOutcome');

export const tevWorkflowId = (tevId: string) => `tev-${tevId}`;

// A local activity: the posting runs in the worker that holds the workflow task, so the caller waits for one
// database transaction, not for a round of task queue dispatches. Retried until the database answers.
const { postTev } = proxyLocalActivities<TevActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * One internal transfer. The transfer record already exists (status PROCESSING); this posts it to the ledger
 * exactly once and resolves it to DONE or FAILED, whether or not the HTTP caller is still waiting.
 */
export async function tevWorkflow(input: { tevId: string }): Promise<TevOutcome> {
  let outcome: TevOutcome | undefined;
  setHandler(tevOutcome, async () => {
    await condition(() => outcome !== undefined);
    return outcome!;
  });
  outcome = await postTev(input.tevId);
  await condition(allHandlersFinished);
  return outcome;
}
