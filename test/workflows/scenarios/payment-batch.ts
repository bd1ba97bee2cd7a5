/** The batch payout workflow's branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { PaymentBatchActivities } from '../../../activities/payment-batches.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import {
  paymentBatchStart,
  paymentBatchWake,
  type BatchFinalStatus,
  type BatchProgress,
  type BatchStart,
  type PaymentBatchInput,
  type PaymentBatchRun,
} from '../../../workflows/contracts/payment-batch.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog, inTurn } from '../support/stubs.ts';

export const PAY: BatchStart = { kind: 'PAY' };
/** A step's answer: `paid` items paid now, `processing` Pix not final yet. */
export const step = (paid: number, processing = 0): BatchProgress => ({ paid, processing, finished: null });
export const finished = (status: BatchFinalStatus = 'FINISHED'): BatchProgress => ({ paid: 0, processing: 0, finished: status });
/** Held for an approval whose deadline is `inMs` from now. */
export const waitFor = (inMs: number): BatchStart => ({ kind: 'WAIT', until: new Date(Date.now() + inMs).toISOString() });

/** The steps as the database answers them: `starts` and `steps` in turn, each last one repeated. */
export function batchStubs(log: ActivityLog, starts: (BatchStart | (() => BatchStart))[], steps: BatchProgress[]): PaymentBatchActivities {
  const start = inTurn(...starts);
  const pay = inTurn(...steps);
  return log.record<PaymentBatchActivities>({
    startPaymentBatch: async () => {
      const answer = await start();
      return typeof answer === 'function' ? answer() : answer;
    },
    payPaymentBatchChunk: () => pay(),
  });
}

export interface BatchScenario extends ScenarioRun<BatchFinalStatus> {
  run: PaymentBatchRun;
  endedAt: number;
}

interface Options {
  starts?: (BatchStart | (() => BatchStart))[];
  steps: BatchProgress[];
  input?: Partial<PaymentBatchInput>;
  /** Woken (signal-with-start, as the hand-off does) once the run has called its start this many times. */
  wakeAfterStarts?: number;
}

export const batchRun = (): PaymentBatchRun => ({ batchId: `b${randomUUID().replaceAll('-', '').slice(0, 23)}`, tenantId: randomUUID(), accountId: randomUUID(), chunkSize: 100, pixInFlight: 200 });

/** Starts the batch's run as its hand-off does, wakes it when told, and awaits its end. */
export async function runBatch(h: WorkflowHarness, options: Options): Promise<BatchScenario> {
  const log = new ActivityLog();
  return h.withWorker(batchStubs(log, options.starts ?? [PAY], options.steps), async (taskQueue) => {
    const run = batchRun();
    const start = paymentBatchStart(run);
    start.args = [{ ...(start.args[0] as PaymentBatchInput), waitMs: 200, ...options.input }];
    await startWorkflow(h.client, taskQueue, start);
    if (options.wakeAfterStarts) {
      while (log.names().filter((n) => n === 'startPaymentBatch').length < options.wakeAfterStarts) await new Promise((resolve) => setTimeout(resolve, 20));
      await startWorkflow(h.client, taskQueue, paymentBatchWake(run));
    }
    const handle = h.client.workflow.getHandle(start.workflowId);
    const result = (await handle.result()) as BatchFinalStatus;
    return { result, log, workflowIds: [start.workflowId], run, endedAt: Date.now() };
  });
}

/** Started at once: three steps of 100 TEVs, then nothing left. */
export const batchPaid = (h: WorkflowHarness) => runBatch(h, { steps: [step(100), step(100), step(100), finished()] });

/** Held for approval: the run waits on the approval's deadline until the approval's step wakes it, then pays. */
export const batchApproved = (h: WorkflowHarness) => runBatch(h, { starts: [waitFor(3_600_000), PAY], wakeAfterStarts: 1, steps: [step(2), finished()] });

/** Held, and nobody wakes it: at the deadline the start reads how the approval ended (expired) and ends the batch. */
export const batchApprovalExpired = (h: WorkflowHarness) => runBatch(h, { starts: [waitFor(1_000), { kind: 'CLOSED', status: 'REJECTED' }], steps: [finished()] });

/** Pix in flight: the steps that pay nothing wait `waitMs`, until the last Pix settle. */
export const batchWaitsForPix = (h: WorkflowHarness) => runBatch(h, { steps: [step(10, 10), step(0, 10), step(5, 15), step(0, 3), finished()] });

/** Two steps a run: the batch continues as new, the next runs not starting it again. */
export const batchContinuesAsNew = (h: WorkflowHarness) =>
  runBatch(h, { input: { stepsPerRun: 2 }, steps: [step(100), step(100), step(100), step(100), step(100), finished()] });
