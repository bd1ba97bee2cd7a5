import type { Client, WithStartWorkflowOperation } from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';

/**
 * Update-with-Start with a deadline: starts (or joins) the workflow and waits for its update's answer, or returns
 * null when none comes in time (worker down, database slow). The workflow goes on either way; callers answer with
 * what they know and let it resolve by itself.
 */
export async function updateWithStartWithin<R, T extends Workflow>(
  client: Client,
  deadlineMs: number,
  update: UpdateDefinition<R, []>,
  start: WithStartWorkflowOperation<T>,
): Promise<R | null> {
  try {
    return await client.withDeadline(Date.now() + deadlineMs, () => client.workflow.executeUpdateWithStart(update, { startWorkflowOperation: start }));
  } catch {
    return null;
  }
}
