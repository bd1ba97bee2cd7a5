import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startWorkflow } from '../../src/temporal/workflow-start.ts';
import { delayedEffectCancelledWake, delayedEffectStart, delayedEffectWorkflowId } from '../../workflows/contracts/delayed-effect.ts';
import { applyStubs, contactRun, effectApplied, effectCancelled, effectOutlivesWorker } from './scenarios/delayed-effect.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';
import { ActivityLog } from './support/stubs.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('the id and search attributes come from the business ids: the kind, the record, its account and tenant', () => {
  const run = contactRun(1000);
  const start = delayedEffectStart(run);
  expect(start.workflowId).toBe(`delayed-effect-trusted-contact-${run.recordId}`);
  expect(start.workflowId).toBe(delayedEffectWorkflowId('TRUSTED_CONTACT', run.recordId));
  expect(start.searchAttributes).toEqual({ TenantId: run.tenantId, AccountId: run.accountId, DelayedEffectId: run.recordId });
  expect(start.args).toEqual([{ kind: 'TRUSTED_CONTACT', recordId: run.recordId, effectiveAt: run.effectiveAt }]);
  expect(start.reusePolicy).toBe('REJECT_DUPLICATE');
});

test('nobody cancels: a durable timer until `effectiveAt`, then the change applied once through the activity', async () => {
  const scenario = await effectApplied(h);
  expect(scenario.result).toBe('APPLIED');
  expect(scenario.log.list()).toEqual([['applyDelayedEffect', 'TRUSTED_CONTACT', scenario.run.recordId]]);
  // A timer, not a poll: nothing runs before the effective time.
  expect(scenario.log.calls[0]!.at).toBeGreaterThanOrEqual(Date.parse(scenario.run.effectiveAt) - 100);
});

test('the apply fails (the database away), and is retried until it answers: applied once it does', async () => {
  const scenario = await effectApplied(h, 300, new Error('connection refused'), 'APPLIED');
  expect(scenario.result).toBe('APPLIED');
  expect(scenario.log.names()).toEqual(['applyDelayedEffect', 'applyDelayedEffect']);
});

test('the record was cancelled without the signal reaching the run: the apply finds it so, and the run ends CANCELLED', async () => {
  const scenario = await effectApplied(h, 300, 'CANCELLED');
  expect(scenario.result).toBe('CANCELLED');
  expect(scenario.log.calls).toHaveLength(1);
});

test('cancelled during the wait: the wake ends the run at once, nothing applied', async () => {
  const scenario = await effectCancelled(h);
  expect(scenario.result).toBe('CANCELLED');
  expect(scenario.log.calls).toEqual([]);
  expect(scenario.endedAt).toBeLessThan(Date.parse(scenario.run.effectiveAt) - 3_500_000);
});

test('cancelled before the run was started: the wake starts it and it ends at once; the late start changes nothing', async () => {
  const scenario = await effectCancelled(h, { started: false });
  expect(scenario.result).toBe('CANCELLED');
  expect(scenario.log.calls).toEqual([]);
});

test('a replaced request: the old run is cancelled, the new one applies at its own time', async () => {
  const log = new ActivityLog();
  await h.withWorker(applyStubs(log), async (taskQueue) => {
    const replaced = contactRun(3_600_000);
    const replacement = contactRun(800);
    await startWorkflow(h.client, taskQueue, delayedEffectStart(replaced));
    // What the use case writes in one transaction: the old request's wake and the new one's start.
    await Promise.all([startWorkflow(h.client, taskQueue, delayedEffectCancelledWake(replaced)), startWorkflow(h.client, taskQueue, delayedEffectStart(replacement))]);
    expect(await h.client.workflow.getHandle(delayedEffectStart(replaced).workflowId).result()).toBe('CANCELLED');
    expect(await h.client.workflow.getHandle(delayedEffectStart(replacement).workflowId).result()).toBe('APPLIED');
    expect(log.list()).toEqual([['applyDelayedEffect', 'TRUSTED_CONTACT', replacement.recordId]]);
  });
});

test('a worker restarted during the wait: the next worker applies the change at its time, once', async () => {
  const scenario = await effectOutlivesWorker(h);
  expect(scenario.result).toBe('APPLIED');
  expect(scenario.firstWorkerLog.calls).toEqual([]);
  expect(scenario.log.list()).toEqual([['applyDelayedEffect', 'TRUSTED_CONTACT', scenario.run.recordId]]);
  expect(scenario.log.calls[0]!.at).toBeGreaterThanOrEqual(Date.parse(scenario.run.effectiveAt) - 100);
});

test('a finished run is not started again: a late start or wake of an applied change leaves it applied', async () => {
  const scenario = await effectApplied(h, 200);
  await h.withWorker(applyStubs(scenario.log), async (taskQueue) => {
    await startWorkflow(h.client, taskQueue, delayedEffectStart(scenario.run));
    await startWorkflow(h.client, taskQueue, delayedEffectCancelledWake(scenario.run));
  });
  const handle = h.client.workflow.getHandle(scenario.workflowIds[0]!);
  expect(await handle.result()).toBe('APPLIED');
  expect(scenario.log.calls).toHaveLength(1);
});
