import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startWorkflow } from '../../src/temporal/workflow-start.ts';
import { paymentBatchStart, paymentBatchWake, paymentBatchWorkflowId } from '../../workflows/contracts/payment-batch.ts';
import { batchApprovalExpired, batchApproved, batchContinuesAsNew, batchPaid, batchRun, batchStubs, batchWaitsForPix, finished, PAY, runBatch, step, waitFor } from './scenarios/payment-batch.ts';
import { runHistories, startHarness, type WorkflowHarness } from './support/harness.ts';
import { ActivityLog } from './support/stubs.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('the id and search attributes come from the business ids: the batch, its account and tenant', () => {
  const run = batchRun();
  const start = paymentBatchStart(run);
  expect(start.workflowId).toBe(`payment-batch-${run.batchId}`);
  expect(start.workflowId).toBe(paymentBatchWorkflowId(run.batchId));
  expect(start.searchAttributes).toEqual({ TenantId: run.tenantId, AccountId: run.accountId, BatchId: run.batchId });
  expect(start.args).toEqual([{ batchId: run.batchId, chunkSize: 100, pixInFlight: 200 }]);
  expect(start.reusePolicy).toBe('ALLOW_DUPLICATE_FAILED_ONLY');
  expect(paymentBatchWake(run)).toEqual({ ...start, signal: { name: 'batchWoken', args: [] } });
});

test('started at once: its start once, then steps until nothing is left, each step with the batch and its sizes', async () => {
  const scenario = await batchPaid(h);
  expect(scenario.result).toBe('FINISHED');
  const { batchId } = scenario.run;
  expect(scenario.log.list()).toEqual([
    ['startPaymentBatch', batchId],
    ...Array(4).fill(['payPaymentBatchChunk', batchId, 100, 200]),
  ]);
  // A step that paid goes on at once: no wait between them.
  const steps = scenario.log.calls.filter((c) => c.name === 'payPaymentBatchChunk');
  expect(steps.at(-1)!.at - steps[0]!.at).toBeLessThan(150);
});

test('held for approval: it waits, the approval wakes it, and it pays long before the deadline', async () => {
  const scenario = await batchApproved(h);
  expect(scenario.result).toBe('FINISHED');
  expect(scenario.log.names()).toEqual(['startPaymentBatch', 'startPaymentBatch', 'payPaymentBatchChunk', 'payPaymentBatchChunk']);
});

test('held, and nothing wakes it: at the approval deadline its start reads how the approval ended, and the batch ends', async () => {
  const started = Date.now();
  const scenario = await batchApprovalExpired(h);
  expect(scenario.result).toBe('REJECTED');
  expect(scenario.log.names()).toEqual(['startPaymentBatch', 'startPaymentBatch']);
  // A durable timer until the deadline, not a poll.
  expect(scenario.log.calls[1]!.at - started).toBeGreaterThanOrEqual(900);
});

test('cancelled before it started: its start answers the end, and no item is paid', async () => {
  const scenario = await runBatch(h, { starts: [{ kind: 'CLOSED', status: 'CANCELLED' }], steps: [finished()] });
  expect(scenario.result).toBe('CANCELLED');
  expect(scenario.log.names()).toEqual(['startPaymentBatch']);
});

test('Pix in flight: a step that paid nothing waits `waitMs` before the next, until every Pix is final', async () => {
  const scenario = await batchWaitsForPix(h);
  expect(scenario.result).toBe('FINISHED');
  const steps = scenario.log.calls.filter((c) => c.name === 'payPaymentBatchChunk');
  expect(steps).toHaveLength(5);
  // After steps 2 and 4 (nothing paid) the run waited `waitMs` (200); after 1 and 3 (items paid) it did not.
  const gaps = steps.slice(1).map((s, i) => s.at - steps[i]!.at);
  expect([gaps[0]! < 150, gaps[1]! >= 180, gaps[2]! < 150, gaps[3]! >= 180]).toEqual([true, true, true, true]);
});

test('a wake ends a wait for Pix at once (the batch was cancelled, say): the next step comes before `waitMs`', async () => {
  const log = new ActivityLog();
  await h.withWorker(batchStubs(log, [PAY], [step(10, 10), step(0, 10), finished()]), async (taskQueue) => {
    const run = batchRun();
    const start = paymentBatchStart(run);
    start.args = [{ ...(start.args[0] as object), waitMs: 60_000 }];
    await startWorkflow(h.client, taskQueue, start);
    while (log.names().filter((n) => n === 'payPaymentBatchChunk').length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    const woken = Date.now();
    await startWorkflow(h.client, taskQueue, paymentBatchWake(run));
    expect(await h.client.workflow.getHandle(start.workflowId).result()).toBe('FINISHED');
    expect(Date.now() - woken).toBeLessThan(5_000);
  });
});

test('a long batch continues as new every `stepsPerRun` steps; the next runs do not start it again', async () => {
  const scenario = await batchContinuesAsNew(h);
  expect(scenario.result).toBe('FINISHED');
  expect(scenario.log.names()).toEqual(['startPaymentBatch', ...Array(6).fill('payPaymentBatchChunk')]);
  expect(await runHistories(h.client, scenario.workflowIds[0]!)).toHaveLength(3);
});

test('a step that fails (the database away) is retried until it answers', async () => {
  const log = new ActivityLog();
  let calls = 0;
  const stubs = batchStubs(log, [PAY], [finished()]);
  const flaky = {
    ...stubs,
    payPaymentBatchChunk: async (...args: Parameters<typeof stubs.payPaymentBatchChunk>) => {
      if (calls++ === 0) throw new Error('connection refused');
      return stubs.payPaymentBatchChunk(...args);
    },
  };
  await h.withWorker(flaky, async (taskQueue) => {
    const start = paymentBatchStart(batchRun());
    await startWorkflow(h.client, taskQueue, start);
    expect(await h.client.workflow.getHandle(start.workflowId).result()).toBe('FINISHED');
  });
  expect(calls).toBe(2);
});

test('an ended batch is not started again: a late wake leaves it ended', async () => {
  const scenario = await runBatch(h, { steps: [finished()], starts: [PAY, waitFor(10)] });
  await h.withWorker(batchStubs(scenario.log, [PAY], [finished()]), async (taskQueue) => {
    await startWorkflow(h.client, taskQueue, paymentBatchWake(scenario.run));
  });
  expect(await h.client.workflow.getHandle(scenario.workflowIds[0]!).result()).toBe('FINISHED');
  expect(scenario.log.names()).toEqual(['startPaymentBatch', 'payPaymentBatchChunk']);
});
