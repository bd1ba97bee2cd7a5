import { nextOccurrence, runOccurrence } from '../src/schedules/execution.ts';
import type { OccurrencePolicy, OccurrenceStatus, NextOccurrence } from '../workflows/contracts/scheduled-payment.ts';
import type { ActivityDeps } from './deps.ts';

export function scheduledPaymentActivities({ payments }: ActivityDeps) {
  return {
    /** The schedule's earliest occurrence still to run (none: the run ends), and whether it was cancelled. */
    nextScheduledOccurrence: (tenantId: string, scheduleId: string): Promise<NextOccurrence> => nextOccurrence(payments, tenantId, scheduleId),
    /** Runs the occurrence's attempt due now through the payment path and records its outcome (or its retry), once. */
    runScheduledOccurrence: (tenantId: string, scheduleId: string, date: string, policy: OccurrencePolicy): Promise<OccurrenceStatus> =>
      runOccurrence(payments, tenantId, scheduleId, date, policy),
  };
}
export type ScheduledPaymentActivities = ReturnType<typeof scheduledPaymentActivities>;
