import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { startWorkflow } from '../../src/temporal/workflow-start.ts';
import { NOT_APPROVER, approvalCancelledWake, approvalStart, decide } from '../../workflows/contracts/approval.ts';
import { pixPayoutWorkflowId } from '../../workflows/contracts/pix-payout.ts';
import {
  DECIDER,
  approvalCancelled,
  approvalDecided,
  approvalDeciderReplaced,
  approvalExpires,
  approvalStubs,
  executedPayout,
  executedTev,
  refusedPayout,
} from './scenarios/approval.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';
import { ActivityLog } from './support/stubs.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('nobody decides: the request expires at its deadline', async () => {
  const run = await approvalExpires(h);
  expect(run.result).toBe('EXPIRED');
  expect(run.log.list()).toEqual([['closeApproval', run.requestId, 'EXPIRED', null]]);
  // A durable timer to `expiresAt`, not a poll: nothing happens before it.
  expect(run.log.calls[0]!.at).toBeGreaterThanOrEqual(Date.parse(run.expiresAt) - 100);
});

test('rejected: the step rejects it as its decider (checked against the account) and no payment runs', async () => {
  const run = await approvalDecided(h, false);
  expect(run.result).toBe('REJECTED');
  expect(run.log.list()).toEqual([['rejectApproval', run.requestId, DECIDER]]);
});

test('approved TEV: the payment runs once, then the request closes EXECUTED with its operation', async () => {
  const executed = executedTev();
  const run = await approvalDecided(h, true, executed);
  expect(run.result).toBe('EXECUTED');
  expect(run.log.list()).toEqual([
    ['approveAndExecute', run.requestId, DECIDER],
    ['closeApproval', run.requestId, 'EXECUTED', { operationId: executed.operationId, reason: null }],
  ]);
  expect(run.workflowIds).toHaveLength(1);
});

test('approved Pix payout: its settlement starts as a child on the same queue and settles after the approval closes', async () => {
  const executed = executedPayout();
  const run = await approvalDecided(h, true, executed);
  expect(run.result).toBe('EXECUTED');
  expect(run.workflowIds).toEqual([expect.stringMatching(/^approval-/), pixPayoutWorkflowId(executed.payout!.payoutId)]);
  const payoutId = executed.payout!.payoutId;
  // The approval debited the payout; it closes while its child submits the payout: the two runs interleave in any order.
  const names = run.log.names();
  expect(names[0]).toBe('approveAndExecute');
  expect([...names.slice(1, 3)].sort()).toEqual(['closeApproval', 'submitPixPayout']);
  expect(names).not.toContain('debitPixPayout');
  expect(run.log.calls.filter((c) => c.name === 'settlePixPayout').map((c) => c.args[0])).toEqual([payoutId]);
  const payout = h.client.workflow.getHandle(pixPayoutWorkflowId(payoutId));
  expect((await payout.describe()).parentExecution?.workflowId).toBe(run.workflowIds[0]);
});

test('approved but refused (the balance no longer covers it): FAILED with the reason, no settlement started', async () => {
  const executed = refusedPayout();
  const run = await approvalDecided(h, true, executed);
  expect(run.result).toBe('FAILED');
  expect(run.log.list()).toEqual([
    ['approveAndExecute', run.requestId, DECIDER],
    ['closeApproval', run.requestId, 'FAILED', { operationId: executed.operationId, reason: 'INSUFFICIENT_BALANCE' }],
  ]);
  await expect(h.client.workflow.getHandle(pixPayoutWorkflowId(executed.payout!.payoutId)).describe()).rejects.toThrow();
});

test('only the first decision counts: a second one, while the payment runs, is refused by the validator', async () => {
  const log = new ActivityLog();
  let release!: () => void;
  const paymentRunning = new Promise<void>((resolve) => (release = resolve));
  const stubs = approvalStubs(log, executedTev());
  const slowPayment = { ...stubs, approveAndExecute: async (id: string, by: string | null) => (await paymentRunning, stubs.approveAndExecute(id, by)) };
  await h.withWorker(slowPayment, async (taskQueue) => {
    const start = approvalStart({ requestId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    const first = await handle.startUpdate(decide, { args: [{ approve: true }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    const second = handle.executeUpdate(decide, { args: [{ approve: false }] });
    await expect(second).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(second).rejects.toMatchObject({ cause: { message: 'APPROVAL_ALREADY_DECIDED' } });
    release();
    expect(await first.result()).toBe('EXECUTED');
  });
  expect(log.names()).toEqual(['approveAndExecute', 'closeApproval']);
});

test('the approver was replaced after the api checked the decider: the step refuses it, the run waits, the new approver decides', async () => {
  const run = await approvalDeciderReplaced(h);
  expect(run.refusal).toMatchObject({ cause: { type: NOT_APPROVER } });
  expect(run.result).toBe('EXECUTED');
  expect(run.log.names()).toEqual(['approveAndExecute', 'approveAndExecute', 'closeApproval']);
  expect(run.log.calls[0]!.args).toEqual([run.requestId, DECIDER]);
  expect(run.log.calls[1]!.args[1]).not.toBe(DECIDER);
});

test('dual approval turned off while the request waits: the wake ends the run CANCELLED, no step runs', async () => {
  const run = await approvalCancelled(h);
  expect(run.result).toBe('CANCELLED');
  expect(run.log.list()).toEqual([]);
});

test('cancelled before its run started: the wake starts it, and it ends CANCELLED at once', async () => {
  const run = await approvalCancelled(h, { started: false });
  expect(run.result).toBe('CANCELLED');
  expect(run.log.list()).toEqual([]);
});

test('cancelled while an approval was on its way: the step finds it cancelled, the decision answers CANCELLED, nothing closes it again', async () => {
  const log = new ActivityLog();
  await h.withWorker(approvalStubs(log, { status: 'CANCELLED' }), async (taskQueue) => {
    const start = approvalStart({ requestId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    expect(await handle.executeUpdate(decide, { args: [{ approve: true, decidedBy: DECIDER }] })).toBe('CANCELLED');
    expect(await handle.result()).toBe('CANCELLED');
  });
  expect(log.names()).toEqual(['approveAndExecute']);
});

test("waking the run of a request that already ended changes nothing (the operator's hand-off counts it done)", async () => {
  const log = new ActivityLog();
  await h.withWorker(approvalStubs(log), async (taskQueue) => {
    const run = { requestId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000).toISOString() };
    await startWorkflow(h.client, taskQueue, approvalStart(run));
    const handle = h.client.workflow.getHandle(approvalStart(run).workflowId);
    expect(await handle.executeUpdate(decide, { args: [{ approve: false, decidedBy: DECIDER }] })).toBe('REJECTED');
    await handle.result();
    const ended = await handle.describe();
    await expect(startWorkflow(h.client, taskQueue, approvalCancelledWake(run))).resolves.toBeUndefined();
    const latest = await handle.describe();
    expect([latest.runId, latest.status.name]).toEqual([ended.runId, 'COMPLETED']);
    expect(await handle.result()).toBe('REJECTED');
  });
});
