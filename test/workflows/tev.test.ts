import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { outcomeUnknown, resolvedAs, resolveTransfer, sandboxDone, sandboxFailed } from './scenarios/tev.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('sandbox ,97: after its delay the transfer settles DONE', async () => {
  const run = await sandboxDone(h);
  expect(run.result).toEqual(await resolvedAs(run.input));
  expect(run.result.status).toBe('DONE');
  expect(run.log.list()).toEqual([['resolveTev', run.input]]);
  expect(run.log.calls[0]!.at - run.startedAt).toBeGreaterThanOrEqual(1_000);
});

test('sandbox ,98: after its delay the activity is asked to fail it', async () => {
  const run = await sandboxFailed(h);
  expect(run.result).toMatchObject({ status: 'FAILED', reason: 'SANDBOX_FAILURE', feeCents: '0' });
  expect(run.log.list()).toEqual([['resolveTev', { ...run.input, sandbox: { delayMs: 1_000, outcome: 'FAILED' } }]]);
  expect(run.log.calls[0]!.at - run.startedAt).toBeGreaterThanOrEqual(1_000);
});

test('an outcome not known in time: resolved at once, no delay', async () => {
  const run = await outcomeUnknown(h);
  expect(run.result.status).toBe('DONE');
  expect(run.log.list()).toEqual([['resolveTev', run.input]]);
  // No timer in its history, rather than a wall-clock bound: a loaded CI machine once took 1,080 ms to run it.
  const history = await h.client.workflow.getHandle(run.workflowIds[0]!).fetchHistory();
  expect(history.events!.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
});

test('the database does not answer: the settlement is retried until it does, with the same submission', async () => {
  let attempts = 0;
  const run = await resolveTransfer(h, null, async (input) => {
    if (++attempts === 1) throw new Error('connection terminated');
    return resolvedAs(input);
  });
  expect(run.result.status).toBe('DONE');
  expect(run.log.list()).toEqual([['resolveTev', run.input], ['resolveTev', run.input]]);
});
