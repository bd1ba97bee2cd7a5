import { allHandlersFinished, condition, continueAsNew, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { PaymentBatchActivities } from '../activities/payment-batches.ts';
import { batchWoken, type BatchFinalStatus, type PaymentBatchInput } from './contracts/payment-batch.ts';
import { LOCAL_DATABASE_STEP } from './activity-options.ts';

// Local: a step is a database transaction of a few dozen milliseconds; run in the worker that holds the workflow
// task, a 5,000-item batch is a few workflow tasks instead of an activity task per step through the Temporal server.
const { startPaymentBatch, payPaymentBatchChunk } = proxyLocalActivities<PaymentBatchActivities>(LOCAL_DATABASE_STEP);

/** Steps per run before it continues as new, so that no history grows with the batch. */
export const STEPS_PER_RUN = 100;
const DEFAULT_WAIT_MS = 1_000;

/**
 * One batch payout. First its start: a batch held for dual approval waits for its approval's decision (a wake, or
 * the approval's deadline, after which the start reads how the approval ended); the start checks that the batch's
 * total with fees is available, or refuses it whole. Then its steps: each pays the next chunk of its items of each
 * kind in one transaction (a TEV settles there; a Pix is debited and settled by its own workflow), at most
 * `pixInFlight` Pix not final at once, and waits `waitMs` (or a wake) when it paid nothing. It ends when no item is
 * left to pay or to settle, and the batch's end is recorded with its event. Cancelling the batch's items is done in
 * the database: the steps find nothing left to pay.
 */
export async function paymentBatchWorkflow(input: PaymentBatchInput): Promise<BatchFinalStatus> {
  let woken = false;
  setHandler(batchWoken, () => {
    woken = true;
  });

  if (!input.started) {
    for (;;) {
      woken = false;
      const start = await startPaymentBatch(input.batchId);
      if (start.kind === 'CLOSED') return start.status;
      if (start.kind === 'PAY') break;
      await condition(() => woken, Math.max(Date.parse(start.until) - Date.now(), 1));
    }
  }

  const stepsPerRun = input.stepsPerRun ?? STEPS_PER_RUN;
  for (let step = 0; step < stepsPerRun && !workflowInfo().continueAsNewSuggested; step++) {
    woken = false;
    const progress = await payPaymentBatchChunk(input.batchId, input.chunkSize, input.pixInFlight);
    if (progress.finished) return progress.finished;
    if (progress.paid === 0) await condition(() => woken, input.waitMs ?? DEFAULT_WAIT_MS);
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof paymentBatchWorkflow>({ ...input, started: true });
}
