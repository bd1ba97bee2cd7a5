import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startWorkflow } from '../../src/temporal/workflow-start.ts';
import { ROUNDS_PER_RUN, scheduleChangedWake, scheduledPaymentStart, scheduledPaymentWorkflowId } from '../../workflows/contracts/scheduled-payment.ts';
import { occurrenceOutlivesWorker, occurrencesRun, scheduleCancelled, scheduleRun } from './scenarios/scheduled-payment.ts';
import { runHistories, startHarness, type WorkflowHarness } from './support/harness.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('the id and search attributes come from the business ids: the schedule, its account and tenant', () => {
  const run = scheduleRun();
  const start = scheduledPaymentStart(run);
  expect(start.workflowId).toBe(`scheduled-payment-${run.scheduleId}`);
  expect(start.workflowId).toBe(scheduledPaymentWorkflowId(run.scheduleId));
  expect(start.searchAttributes).toEqual({ TenantId: run.tenantId, AccountId: run.accountId, ScheduleId: run.scheduleId });
  expect(start.args).toEqual([{ scheduleId: run.scheduleId, tenantId: run.tenantId, policy: run.policy, roundsPerRun: ROUNDS_PER_RUN }]);
  expect(start.reusePolicy).toBe('REJECT_DUPLICATE');
  expect(scheduleChangedWake(run).signal).toEqual({ name: 'scheduleChanged', args: [] });
});

test('each occurrence runs once, on a durable timer until its time, and the run ends FINISHED', async () => {
  const scenario = await occurrencesRun(h);
  expect(scenario.result).toBe('FINISHED');
  const runs = scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence');
  expect(runs.map((c) => c.args[2])).toEqual(scenario.schedule.occurrences.map((o) => o.date));
  runs.forEach((c, i) => expect(c.at).toBeGreaterThanOrEqual(scenario.schedule.occurrences[i]!.runAt - 100));
  expect(runs[0]!.args[3]).toEqual(scenario.run.policy);
  expect(scenario.schedule.occurrences.map((o) => o.status)).toEqual(['PAID', 'PAID', 'PAID']);
});

test('an attempt refused for insufficient balance is run again at its retry time, then its outcome stands', async () => {
  // The second occurrence is due well after the first one's two retries (300 ms apart, and a round trip through
  // Temporal each, slower on a loaded machine), so that their order is the one the assertion names.
  const scenario = await occurrencesRun(h, { dueInMs: [500, 5_000], answers: [['SCHEDULED', 'SCHEDULED', 'FAILED'], ['PAID']] });
  expect(scenario.result).toBe('FINISHED');
  const runs = scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence');
  expect(runs.map((c) => c.args[2])).toEqual(['2027-01-01', '2027-01-01', '2027-01-01', '2027-01-02']);
  // The retries wait their interval: a timer each.
  expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(scenario.schedule.retryMs - 50);
  expect(scenario.schedule.occurrences.map((o) => o.status)).toEqual(['FAILED', 'PAID']);
});

test('cancelled while waiting: the wake makes the run read again, and it ends CANCELLED without running more', async () => {
  const scenario = await scheduleCancelled(h);
  expect(scenario.result).toBe('CANCELLED');
  expect(scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence').map((c) => c.args[2])).toEqual(['2027-01-01']);
  expect(scenario.schedule.occurrences.map((o) => o.status)).toEqual(['PAID', 'CANCELLED']);
});

test('a long schedule continues as new after its rounds, and every occurrence still runs once', async () => {
  const scenario = await occurrencesRun(h, { dueInMs: [300, 600, 900, 1_200, 1_500], roundsPerRun: 2 });
  expect(scenario.result).toBe('FINISHED');
  expect(scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence')).toHaveLength(5);
  expect((await runHistories(h.client, scenario.workflowIds[0]!)).length).toBe(3);
});

test('no worker at the due time: the occurrence runs as soon as a worker has the run again, once', async () => {
  const scenario = await occurrenceOutlivesWorker(h);
  expect(scenario.result).toBe('FINISHED');
  expect(scenario.firstWorkerLog.names()).toEqual(['nextScheduledOccurrence']);
  const runs = scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence');
  expect(runs).toHaveLength(1);
  expect(runs[0]!.at).toBeGreaterThanOrEqual(scenario.restartedAt);
});

test('a finished run is not started again: a late start or wake of a finished schedule runs nothing', async () => {
  const scenario = await occurrencesRun(h, { dueInMs: [200] });
  await h.withWorker(scenario.schedule.activities(scenario.log), async (taskQueue) => {
    await startWorkflow(h.client, taskQueue, scheduledPaymentStart(scenario.run));
    await startWorkflow(h.client, taskQueue, scheduleChangedWake(scenario.run));
  });
  expect(await h.client.workflow.getHandle(scenario.workflowIds[0]!).result()).toBe('FINISHED');
  expect(scenario.log.calls.filter((c) => c.name === 'runScheduledOccurrence')).toHaveLength(1);
});
