import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { deliveriesBackOff, wakeEndsIdleWait } from './scenarios/webhook-endpoint.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('more due: the next batch runs at once; failures due in 300 ms: it waits that long; endpoint deleted: DELETED', async () => {
  const run = await deliveriesBackOff(h);
  expect(run.result).toBe('DELETED');
  expect(run.log.names()).toEqual(['deliverDueBatch', 'deliverDueBatch', 'deliverDueBatch']);
  expect(new Set(run.log.calls.map((c) => c.args[0])).size).toBe(1);
  const [full, retrying, last] = run.log.calls.map((c) => c.at) as [number, number, number];
  expect(retrying - full).toBeLessThan(300);
  expect(last - retrying).toBeGreaterThanOrEqual(300);
});

test('nothing pending: a wake cuts the hour-long idle wait short', async () => {
  const run = await wakeEndsIdleWait(h);
  expect(run.result).toBe('DELETED');
  expect(run.log.names()).toEqual(['deliverDueBatch', 'deliverDueBatch']);
  expect(run.log.calls[1]!.at - run.log.calls[0]!.at).toBeLessThan(10_000);
});
