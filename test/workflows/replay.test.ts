/**
 * Replays every checked-in history (test/workflows/histories, written by record-histories.ts) against the current
 * workflow code: a change that would make a running workflow non-deterministic fails here, not in production.
 */
import { expect, test } from '@jest/globals';
import { Worker } from '@temporalio/worker';
import * as workflows from '../../workflows/index.ts';
import { quietRuntime, workflowCode } from './support/harness.ts';
import { recordedHistories } from './support/history-files.ts';

const histories = recordedHistories();

test('every workflow the worker registers has recorded histories', () => {
  const recorded = new Set(histories.map(({ history }) => history.events[0]!.workflowExecutionStartedEventAttributes!.workflowType!.name));
  expect([...recorded].sort()).toEqual(Object.keys(workflows).sort());
});

test('every recorded history replays deterministically on the current workflow code', async () => {
  quietRuntime();
  const replays = Worker.runReplayHistories(
    await workflowCode(),
    histories.map(({ file, history }) => ({ workflowId: file, history })),
  );
  const failures: string[] = [];
  for await (const { workflowId, error } of replays) {
    if (error) failures.push(`${workflowId}: ${error.message}`);
  }
  expect(failures).toEqual([]);
  expect(histories.length).toBeGreaterThanOrEqual(20);
});
