/** The webhook endpoint workflow's batches and waits, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { WebhookActivities } from '../../../activities/webhooks.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { wake, webhookEndpointWake, type BatchOutcome } from '../../../workflows/contracts/webhook-endpoint.ts';
import { waitFor } from '../../support/wait.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog, inTurn } from '../support/stubs.ts';

export const FULL_BATCH: BatchOutcome = { endpointEnabled: true, attempted: 50, moreDue: true, nextDueInMs: 0 };
export const RETRY_SOON: BatchOutcome = { endpointEnabled: true, attempted: 2, moreDue: false, nextDueInMs: 300 };
export const NOTHING_PENDING: BatchOutcome = { endpointEnabled: true, attempted: 0, moreDue: false, nextDueInMs: null };
export const ENDPOINT_DELETED: BatchOutcome = { endpointEnabled: false, attempted: 0, moreDue: false, nextDueInMs: null };

/**
 * The relay wakes the endpoint's run (signal-with-start); its batches answer `outcomes` in turn. With `wakeAfterBatch`,
 * the relay wakes it again once that many batches ran.
 */
async function deliver(h: WorkflowHarness, outcomes: BatchOutcome[], wakeAfterBatch?: number): Promise<ScenarioRun<string>> {
  const log = new ActivityLog();
  const batch = inTurn(...outcomes);
  return h.withWorker(log.record<WebhookActivities>({ deliverDueBatch: () => batch() }), async (taskQueue) => {
    const start = webhookEndpointWake({ endpointId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID() });
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    if (wakeAfterBatch) {
      await waitFor(async () => log.calls.length >= wakeAfterBatch, 10_000, `batch ${wakeAfterBatch}`);
      await handle.signal(wake);
    }
    return { result: await handle.result(), log, workflowIds: [start.workflowId] };
  });
}

/** A full batch, then one whose failures retry in 300 ms, then the endpoint is gone. */
export const deliveriesBackOff = (h: WorkflowHarness) => deliver(h, [FULL_BATCH, RETRY_SOON, ENDPOINT_DELETED]);
/** Nothing pending (an hour's idle wait) until the relay wakes the run with new events. */
export const wakeEndsIdleWait = (h: WorkflowHarness) => deliver(h, [NOTHING_PENDING, ENDPOINT_DELETED], 1);
