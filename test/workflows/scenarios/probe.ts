/** The operators' probe, for the replay histories. */
import { randomBytes } from 'node:crypto';
import type { ProbeActivities } from '../../../activities/probe.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { probeStart, type ProbeOutcome } from '../../../workflows/contracts/probe.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export async function probeAnswers(h: WorkflowHarness): Promise<ScenarioRun<ProbeOutcome>> {
  const log = new ActivityLog();
  return h.withWorker(log.record<ProbeActivities>({ probeDatabase: async () => '2026-01-02T12:00:00.000Z' }), async (taskQueue) => {
    const start = probeStart(Date.now(), randomBytes(4).toString('hex'), 10);
    await startWorkflow(h.client, taskQueue, start);
    const result = await h.client.workflow.getHandle(start.workflowId).result();
    return { result, log, workflowIds: [start.workflowId] };
  });
}
