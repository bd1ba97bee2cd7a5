/** The scheduled-payment workflow's branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { ScheduledPaymentActivities } from '../../../activities/scheduled-payments.ts';
import { startWorkflow, type WorkflowStart } from '../../../src/temporal/workflow-start.ts';
import {
  scheduleChangedWake,
  scheduledPaymentStart,
  type OccurrenceStatus,
  type ScheduledPaymentInput,
  type ScheduledPaymentOutcome,
  type ScheduledPaymentRun,
} from '../../../workflows/contracts/scheduled-payment.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export interface ScheduledPaymentScenario extends ScenarioRun<ScheduledPaymentOutcome> {
  schedule: StubSchedule;
  run: ScheduledPaymentRun;
}

interface StubOccurrence {
  date: string;
  runAt: number;
  status: OccurrenceStatus;
  /** What its attempts answer in turn (the last repeated): SCHEDULED is a refusal for insufficient balance, retried. */
  answers: OccurrenceStatus[];
}

/**
 * PostgreSQL as the activities see it, in memory: the occurrences with their state. The stubs answer as the use cases
 * do: the earliest open occurrence (none: the run ends), and an attempt that records its outcome or its retry.
 */
export class StubSchedule {
  cancelled = false;
  readonly occurrences: StubOccurrence[];
  readonly retryMs: number;

  constructor(dueInMs: number[], answers: OccurrenceStatus[][] = [], retryMs = 300) {
    this.retryMs = retryMs;
    const now = Date.now();
    this.occurrences = dueInMs.map((ms, i) => ({ date: `2027-01-${String(i + 1).padStart(2, '0')}`, runAt: now + ms, status: 'SCHEDULED', answers: answers[i] ?? ['PAID'] }));
  }

  private open() {
    return this.occurrences.filter((o) => o.status === 'SCHEDULED').sort((a, b) => a.runAt - b.runAt);
  }

  /** The holder cancels it whole: every occurrence still to run. */
  cancel(): void {
    this.cancelled = true;
    for (const o of this.open()) o.status = 'CANCELLED';
  }

  activities(log: ActivityLog): ScheduledPaymentActivities {
    return log.record<ScheduledPaymentActivities>({
      nextScheduledOccurrence: async () => {
        const [next] = this.open();
        return { cancelled: this.cancelled, next: next ? { date: next.date, runAt: new Date(next.runAt).toISOString() } : null };
      },
      runScheduledOccurrence: async (_tenantId, _scheduleId, date) => {
        const o = this.occurrences.find((x) => x.date === date)!;
        if (o.status !== 'SCHEDULED') return o.status;
        const answer = o.answers.length > 1 ? o.answers.shift()! : o.answers[0]!;
        if (answer === 'SCHEDULED') o.runAt = Date.now() + this.retryMs;
        else o.status = answer;
        return answer;
      },
    });
  }
}

/** A schedule's run as the api hands it off, `roundsPerRun` overridden when given. */
export function scheduleRun(): ScheduledPaymentRun {
  return { scheduleId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID(), policy: { retries: 3, retryIntervalMs: 300, lateAfterMs: 60_000 } };
}

const withRounds = (start: WorkflowStart, roundsPerRun?: number): WorkflowStart =>
  roundsPerRun === undefined ? start : { ...start, args: [{ ...(start.args[0] as ScheduledPaymentInput), roundsPerRun }] };

async function finish(h: WorkflowHarness, run: ScheduledPaymentRun, schedule: StubSchedule, log: ActivityLog): Promise<ScheduledPaymentScenario> {
  const handle = h.client.workflow.getHandle(scheduledPaymentStart(run).workflowId);
  return { result: await handle.result(), log, workflowIds: [handle.workflowId], schedule, run };
}

/** Every occurrence runs at its time, each once; retries where the stub refuses; the run ends FINISHED. */
export async function occurrencesRun(h: WorkflowHarness, options: { dueInMs?: number[]; answers?: OccurrenceStatus[][]; roundsPerRun?: number } = {}): Promise<ScheduledPaymentScenario> {
  const log = new ActivityLog();
  const schedule = new StubSchedule(options.dueInMs ?? [800, 1_400, 2_000], options.answers);
  return h.withWorker(schedule.activities(log), async (taskQueue) => {
    const run = scheduleRun();
    await startWorkflow(h.client, taskQueue, withRounds(scheduledPaymentStart(run), options.roundsPerRun));
    return finish(h, run, schedule, log);
  });
}

/**
 * The holder cancels the schedule while its run waits an hour for the next occurrence: the cancellation is recorded,
 * then the wake (signal-with-start through the hand-off) makes the run read again, find nothing, and end CANCELLED.
 */
export async function scheduleCancelled(h: WorkflowHarness): Promise<ScheduledPaymentScenario> {
  const log = new ActivityLog();
  const schedule = new StubSchedule([500, 3_600_000]);
  return h.withWorker(schedule.activities(log), async (taskQueue) => {
    const run = scheduleRun();
    await startWorkflow(h.client, taskQueue, scheduledPaymentStart(run));
    while (schedule.occurrences[0]!.status === 'SCHEDULED') await new Promise((resolve) => setTimeout(resolve, 50));
    // Until the run sleeps toward the second occurrence, an hour away. Its timer is the one of about an hour: the first
    // occurrence's has none when a slow first workflow task finds it already due, so counting timers could wait forever.
    const handle = h.client.workflow.getHandle(scheduledPaymentStart(run).workflowId);
    const sleepsTowardSecond = async () =>
      (await handle.fetchHistory()).events!.some((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0) > 60);
    while (!(await sleepsTowardSecond())) await new Promise((resolve) => setTimeout(resolve, 50));
    schedule.cancel();
    await startWorkflow(h.client, taskQueue, scheduleChangedWake(run));
    return finish(h, run, schedule, log);
  });
}

/**
 * The worker stops while the run waits for its occurrence and comes back after the due time: the timer is
 * Temporal's, so the next worker runs the occurrence as soon as it has the run, once.
 */
export async function occurrenceOutlivesWorker(h: WorkflowHarness): Promise<ScheduledPaymentScenario & { firstWorkerLog: ActivityLog; restartedAt: number }> {
  const firstWorkerLog = new ActivityLog();
  const schedule = new StubSchedule([1_500]);
  const run = scheduleRun();
  const handle = h.client.workflow.getHandle(scheduledPaymentStart(run).workflowId);
  const taskQueue = await h.withWorker(schedule.activities(firstWorkerLog), async (queue) => {
    await startWorkflow(h.client, queue, scheduledPaymentStart(run));
    while (!(await handle.fetchHistory()).events!.some((e) => e.timerStartedEventAttributes)) await new Promise((resolve) => setTimeout(resolve, 50));
    return queue;
  });
  // No worker at the due time.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const restartedAt = Date.now();
  const log = new ActivityLog();
  const scenario = await h.withWorker(schedule.activities(log), () => finish(h, run, schedule, log), taskQueue);
  return { ...scenario, firstWorkerLog, restartedAt };
}
