import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { admin } from './support/admin.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(async () => {
  await platform?.stop();
});

test('system:check runs a workflow end to end through the worker and the database', async () => {
  const r = await admin(platform.env, 'system:check');
  expect(r.exitCode).toBe(0);
  expect(r.out).toEqual({ status: 'ok', workflowId: expect.stringMatching(/^probe-/), databaseTime: expect.any(String), elapsedMs: expect.any(Number), backlog: expect.any(Object) });
  expect(Math.abs(Date.parse(r.out.databaseTime) - Date.now())).toBeLessThan(60_000);
});

test('system:check fails with a clear error when no worker polls the task queue', async () => {
  await platform.stopWorker();
  try {
    const r = await admin(platform.env, 'system:check', '--timeout-seconds', '2');
    expect(r.exitCode).not.toBe(0);
    expect(r.err.code).toBe('COMMAND_FAILED');
  } finally {
    await platform.startWorker();
  }
});

test('the platform\'s search attributes are registered in the namespace', async () => {
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    const { IndexedValueType } = proto.temporal.api.enums.v1;
    for (const name of ['TenantId', 'AccountId', 'HolderId', 'TevId', 'PayoutId', 'ChargeId', 'ApprovalRequestId', 'EventId', 'WebhookId', 'DelayedEffectId']) {
      expect(customAttributes?.[name]).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    // The dev server's ten Keyword slots are taken: later ids are KeywordLists, found with `= "…"` all the same.
    for (const name of ['ScheduleId', 'BatchId']) expect(customAttributes?.[name]).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST);
  } finally {
    await connection.close();
  }
});
