import { afterAll, beforeAll, expect, test } from '@jest/globals';
import proto from '@temporalio/proto';
import type { PixPayoutInput } from '../../workflows/contracts/pix-payout.ts';
import {
  FAILED,
  followPayout,
  PENDING,
  POSTED,
  REFUND,
  payoutFallbackFails,
  payoutFallbackSettles,
  payoutNotified,
  payoutOutlastsRuns,
  payoutUncertainNotified,
  payoutUncertainRejected,
  submittedPayoutAsks,
  submittedPayoutWoken,
  uncertainDebit,
} from './scenarios/pix-payout.ts';
import { runHistories, startHarness, type WorkflowHarness } from './support/harness.ts';

const { EventType } = proto.temporal.api.enums.v1;
/** A history's time or duration (seconds and nanoseconds) in milliseconds. */
const msOf = (t: { seconds?: number | { toNumber(): number } | null; nanos?: number | null }) => Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

const timersOf = async (workflowId: string) =>
  (await runHistories(h.client, workflowId)).flatMap((r) => r.events!.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED));

test('notified: the run submits, waits, and ends with the notified state; it never asks the provider', async () => {
  const run = await payoutNotified(h);
  expect(run.result).toBe('POSTED');
  expect(run.log.list()).toEqual([['submitPixPayout', run.payoutId]]);
});

test('no notification in time: the run asks the provider, `notificationWaitMs` apart, and applies what it answers', async () => {
  const run = await payoutFallbackSettles(h);
  expect(run.result).toBe('REFUNDED');
  expect(run.log.names()).toEqual(['submitPixPayout', 'queryPixPayout', 'queryPixPayout', 'queryPixPayout', 'settlePixPayout', 'refundPixPayout']);
  expect(run.log.calls[4]!.args).toEqual([run.payoutId, { ...POSTED, refund: REFUND }]);
  expect(run.log.calls[5]!.args).toEqual([run.payoutId, REFUND]);
  const queries = run.log.calls.filter((c) => c.name === 'queryPixPayout').map((c) => c.at);
  expect(queries[1]! - queries[0]!).toBeGreaterThanOrEqual(90);
});

test('FAILED by the fallback query: the debit is reversed once and the run ends', async () => {
  const run = await payoutFallbackFails(h);
  expect(run.result).toBe('FAILED');
  expect(run.log.names()).toEqual(['submitPixPayout', 'queryPixPayout', 'queryPixPayout', 'reversePixPayout']);
  expect(run.log.calls.at(-1)!.args).toEqual([run.payoutId, FAILED]);
});

test('a debit the api could not tell: the run debits first; refused, nothing reaches the provider', async () => {
  const run = await payoutUncertainRejected(h);
  expect(run.result).toBe('REJECTED');
  expect(run.log.list()).toEqual([['debitPixPayout', { ...uncertainDebit(run.payoutId), tenantId: expect.any(String), accountId: expect.any(String) }]]);
  const debited = await payoutUncertainNotified(h);
  expect(debited.result).toBe('FAILED');
  expect(debited.log.names()).toEqual(['debitPixPayout', 'submitPixPayout']);
});

test('the fallback waits grow: a few at `notificationWaitMs`, then doubling up to `longestWaitMs`', async () => {
  const run = await followPayout(h, { states: [PENDING, PENDING, PENDING, PENDING, PENDING, PENDING, POSTED] });
  expect(run.result).toBe('POSTED');
  const timers = await timersOf(run.workflowIds[0]!);
  expect(timers.map((t) => msOf(t.timerStartedEventAttributes!.startToFireTimeout!))).toEqual([
    100, 100, 100, 100, 200, 400, 400,
  ]);
});

test('a provider pending past `pollsPerRun` queries: the run continues as new, never submits again, and settles', async () => {
  const run = await payoutOutlastsRuns(h);
  expect(run.result).toBe('POSTED');
  expect(run.log.names()).toEqual(['submitPixPayout', ...Array(5).fill('queryPixPayout'), 'settlePixPayout']);
  const runs = await runHistories(h.client, run.workflowIds[0]!);
  const ends = runs.map((r) => r.events!.at(-1)!.eventType);
  expect(ends).toEqual([...Array(2).fill(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW), EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]);
  const inputs = runs.map((r) => JSON.parse(Buffer.from(r.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!.data!).toString()) as PixPayoutInput);
  expect(inputs.map((i) => i.waiting)).toEqual([undefined, { asks: 2 }, { asks: 4 }]);
});

const eventsOf = async (workflowId: string) => (await runHistories(h.client, workflowId)).flatMap((r) => r.events!);

test('submitted by the hand-off, woken by the notification during its delayed start: one workflow task, no query, no timer', async () => {
  const run = await submittedPayoutWoken(h);
  expect(run.result).toBe('POSTED');
  expect(run.log.list()).toEqual([]);
  const events = await eventsOf(run.workflowIds[0]!);
  // Woken at once, long before its start delay (1.5 s) was over: read in the run's history, not on the test's clock,
  // which also counts the test worker's start.
  const at = (type: proto.temporal.api.enums.v1.EventType) => msOf(events.find((e) => e.eventType === type)!.eventTime!);
  expect(at(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) - at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)).toBeLessThan(1500);
  expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toHaveLength(1);
  expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED)).toEqual([]);
});

test('submitted by the hand-off, never notified: the end of the delayed start is the first query, then the waits', async () => {
  const started = Date.now();
  const run = await submittedPayoutAsks(h);
  expect(run.result).toBe('FAILED');
  expect(run.log.names()).toEqual(['queryPixPayout', 'queryPixPayout', 'reversePixPayout']);
  const queries = run.log.calls.filter((c) => c.name === 'queryPixPayout').map((c) => c.at);
  // The first query at the end of the delay, the second `notificationWaitMs` later.
  expect(queries[0]! - started).toBeGreaterThanOrEqual(1400);
  expect(queries[1]! - queries[0]!).toBeGreaterThanOrEqual(1400);
});
