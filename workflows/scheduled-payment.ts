import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ScheduledPaymentActivities } from '../activities/scheduled-payments.ts';
import { scheduleChanged, type ScheduledPaymentInput, type ScheduledPaymentOutcome } from './contracts/scheduled-payment.ts';
import { DATABASE_STEP, PAYMENT_STEP } from './activity-options.ts';

const { nextScheduledOccurrence } = proxyActivities<ScheduledPaymentActivities>(DATABASE_STEP);
const { runScheduledOccurrence } = proxyActivities<ScheduledPaymentActivities>(PAYMENT_STEP);

/**
 * One run per schedule. PostgreSQL holds the occurrences and their state; the run only reads the earliest one still to
 * run, sleeps on a durable timer until it is due, and runs it through the activity, which pays it through the normal
 * payment path under its own idempotency key and records what came of it (or its next retry's time). A worker
 * restart, or Temporal away at the due time, only delays the timer: the occurrence runs as soon as a worker has the
 * run again, and its record says it ran late. `scheduleChanged` (a cancellation committed) ends the wait: the run
 * reads again. After `roundsPerRun` rounds it continues as new, with nothing to carry but its input.
 */
export async function scheduledPaymentWorkflow(input: ScheduledPaymentInput): Promise<ScheduledPaymentOutcome> {
  let changed = false;
  setHandler(scheduleChanged, () => {
    changed = true;
  });
  for (let round = 0; round < input.roundsPerRun; round++) {
    changed = false;
    const { cancelled, next } = await nextScheduledOccurrence(input.tenantId, input.scheduleId);
    if (!next) return cancelled ? 'CANCELLED' : 'FINISHED';
    const wait = Date.parse(next.runAt) - Date.now();
    if (wait > 0 && (await condition(() => changed, wait))) continue;
    await runScheduledOccurrence(input.tenantId, input.scheduleId, next.date, input.policy);
  }
  return continueAsNew<typeof scheduledPaymentWorkflow>(input);
}
