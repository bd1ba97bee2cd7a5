import { afterAll, beforeAll, expect, test } from '@jest/globals';
import proto from '@temporalio/proto';
import type { PixPayoutInput } from '../../workflows/contracts/pix-payout.ts';
import { followPayout, openingOf, PENDING, POSTED, REFUND, payoutFails, payoutOutlastsRuns, payoutRefunded, payoutRejected, payoutSettles } from './scenarios/pix-payout.ts';
import { runHistories, startHarness, type WorkflowHarness } from './support/harness.ts';

const { EventType } = proto.temporal.api.enums.v1;

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('refused debit: the payment request gets REJECTED and nothing reaches the provider', async () => {
  const run = await payoutRejected(h);
  expect(run.opening).toEqual(openingOf(run.payoutId, true));
  expect(run.result).toBe('REJECTED');
  expect(run.log.list()).toEqual([['openPixPayout', run.payoutId]]);
});

test('the provider is pending three times, then settles; the refund watch ends without a refund', async () => {
  const run = await payoutSettles(h);
  expect(run.opening).toEqual(openingOf(run.payoutId));
  expect(run.result).toBe('POSTED');
  const names = run.log.names();
  expect(names.slice(0, 7)).toEqual(['openPixPayout', 'submitPixPayout', 'queryPixPayout', 'queryPixPayout', 'queryPixPayout', 'queryPixPayout', 'settlePixPayout']);
  expect(run.log.calls[6]!.args).toEqual([run.payoutId, POSTED]);
  // Then refund checks only, with waits doubling from `pollMs` until the 300 ms watch has passed.
  const checks = names.slice(7);
  expect(checks.length).toBeGreaterThanOrEqual(1);
  expect(new Set(checks)).toEqual(new Set(['queryPixPayout']));
});

test('polls wait `pollMs` between queries', async () => {
  const run = await followPayout(h, { states: [PENDING, PENDING, POSTED], refundWatchMs: 1 });
  const queries = run.log.calls.filter((c) => c.name === 'queryPixPayout').map((c) => c.at);
  expect(queries[1]! - queries[0]!).toBeGreaterThanOrEqual(45);
  expect(queries[2]! - queries[1]!).toBeGreaterThanOrEqual(45);
});

test('a refund of a settled payout is credited once and ends the run REFUNDED', async () => {
  const run = await payoutRefunded(h);
  expect(run.result).toBe('REFUNDED');
  expect(run.log.names()).toEqual(['openPixPayout', 'submitPixPayout', 'queryPixPayout', 'queryPixPayout', 'settlePixPayout', 'queryPixPayout', 'queryPixPayout', 'refundPixPayout']);
  expect(run.log.calls.at(-1)!.args).toEqual([run.payoutId, REFUND]);
});

test.each(['FAILED', 'CANCELLED'] as const)('%s at the provider: the debit is reversed once', async (state) => {
  const run = await payoutFails(h, state);
  expect(run.result).toBe(state);
  expect(run.log.names()).toEqual(['openPixPayout', 'submitPixPayout', 'queryPixPayout', 'queryPixPayout', 'reversePixPayout']);
  expect(run.log.calls.at(-1)!.args).toEqual([run.payoutId, { state, endToEndId: 'E2E-FAILED', reason: 'Conta destino encerrada' }]);
});

test('a provider pending past `pollsPerRun` queries: the run continues as new, never debits or submits again, and settles', async () => {
  const run = await payoutOutlastsRuns(h);
  expect(run.result).toBe('REFUNDED');
  expect(run.log.names()).toEqual([
    'openPixPayout', 'submitPixPayout', ...Array(8).fill('queryPixPayout'), 'settlePixPayout', 'queryPixPayout', 'queryPixPayout', 'queryPixPayout', 'refundPixPayout',
  ]);

  // Activities per run: the submission and 3 pending queries; 3 pending queries; a pending query, the settling one,
  // the settlement and a refund check; 2 refund checks and the refund.
  const runs = await runHistories(h.client, run.workflowIds[0]!);
  const activitiesPerRun = runs.map((r) => r.events!.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length);
  expect(activitiesPerRun).toEqual([4, 3, 4, 3]);
  const ends = runs.map((r) => r.events!.at(-1)!.eventType);
  expect(ends).toEqual([...Array(3).fill(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW), EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]);

  // What each run was given: the debit's answer and where the follow-up stood.
  const inputs = runs.map((r) => JSON.parse(Buffer.from(r.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!.data!).toString()) as PixPayoutInput);
  const opening = openingOf(run.payoutId);
  expect(inputs.map((i) => i.resume)).toEqual([
    undefined,
    { opening, followUp: { phase: 'SETTLING' } },
    { opening, followUp: { phase: 'SETTLING' } },
    { opening, followUp: { phase: 'WATCHING_REFUND', settledAt: expect.any(String), nextWaitMs: 100 } },
  ]);
});
