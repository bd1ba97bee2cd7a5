/** The delayed-effect workflow's branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { DelayedEffectActivities } from '../../../activities/delayed-effects.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import {
  delayedEffectCancelledWake,
  delayedEffectStart,
  type DelayedEffectOutcome,
  type DelayedEffectRun,
} from '../../../workflows/contracts/delayed-effect.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export interface DelayedEffectScenario extends ScenarioRun<DelayedEffectOutcome> {
  run: DelayedEffectRun;
  endedAt: number;
}

/** A contact added now, trusted `delayMs` from now: the record's ids as the api writes them in the hand-off. */
export const contactRun = (delayMs: number): DelayedEffectRun => ({
  kind: 'TRUSTED_CONTACT',
  recordId: randomUUID(),
  tenantId: randomUUID(),
  accountId: randomUUID(),
  effectiveAt: new Date(Date.now() + delayMs).toISOString(),
});

/** The apply as the use case answers it: `answers` in turn (an Error is thrown), the last one repeated. */
export function applyStubs(log: ActivityLog, ...answers: (DelayedEffectOutcome | Error)[]): DelayedEffectActivities {
  let calls = 0;
  return log.record<DelayedEffectActivities>({
    applyDelayedEffect: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)] ?? 'APPLIED';
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
}

async function finish(h: WorkflowHarness, run: DelayedEffectRun, log: ActivityLog): Promise<DelayedEffectScenario> {
  const handle = h.client.workflow.getHandle(delayedEffectStart(run).workflowId);
  const result = await handle.result();
  return { result, log, workflowIds: [handle.workflowId], run, endedAt: Date.now() };
}

/** Nobody cancels: the timer fires at `effectiveAt` and the change is applied, once. */
export async function effectApplied(h: WorkflowHarness, delayMs = 1_500, ...answers: (DelayedEffectOutcome | Error)[]): Promise<DelayedEffectScenario> {
  const log = new ActivityLog();
  return h.withWorker(applyStubs(log, ...answers), async (taskQueue) => {
    const run = contactRun(delayMs);
    await startWorkflow(h.client, taskQueue, delayedEffectStart(run));
    return finish(h, run, log);
  });
}

/**
 * The holder removes the contact (or a limit request is cancelled or replaced) during the wait: the use case wakes
 * the run through the hand-off (signal-with-start), and it ends CANCELLED at once, applying nothing. `started: false`:
 * the cancellation reaches Temporal before the start did.
 */
export async function effectCancelled(h: WorkflowHarness, options = { started: true }): Promise<DelayedEffectScenario> {
  const log = new ActivityLog();
  return h.withWorker(applyStubs(log), async (taskQueue) => {
    const run = contactRun(3_600_000);
    if (options.started) await startWorkflow(h.client, taskQueue, delayedEffectStart(run));
    await startWorkflow(h.client, taskQueue, delayedEffectCancelledWake(run));
    // The start, when the reconciler gets to it after the wake: the run is there already, closed or not.
    await startWorkflow(h.client, taskQueue, delayedEffectStart(run));
    return finish(h, run, log);
  });
}

/**
 * The worker stops while the run waits on its timer, and another takes its place on the same task queue: the timer
 * is Temporal's, so the new worker applies the change at `effectiveAt`, once.
 */
export async function effectOutlivesWorker(h: WorkflowHarness): Promise<DelayedEffectScenario & { firstWorkerLog: ActivityLog }> {
  const firstWorkerLog = new ActivityLog();
  const run = contactRun(2_500);
  const handle = h.client.workflow.getHandle(delayedEffectStart(run).workflowId);
  const taskQueue = await h.withWorker(applyStubs(firstWorkerLog), async (queue) => {
    await startWorkflow(h.client, queue, delayedEffectStart(run));
    // Until the run has waited its first task through: the timer is scheduled in its history.
    while (!(await handle.fetchHistory()).events!.some((e) => e.timerStartedEventAttributes)) await new Promise((resolve) => setTimeout(resolve, 50));
    return queue;
  });
  const log = new ActivityLog();
  const scenario = await h.withWorker(applyStubs(log), () => finish(h, run, log), taskQueue);
  return { ...scenario, firstWorkerLog };
}
