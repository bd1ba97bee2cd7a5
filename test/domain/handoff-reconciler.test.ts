/**
 * The hand-off reconciler, in process, on the run's database and Temporal server: the workflows recorded in
 * `workflow_start` are started and their rows removed, a group at a time; rows claimed by a reconciler that died are
 * started by another once their lease ends, a few seconds later, not a minute. The workflows go to a task queue no
 * worker serves: a start is what is checked, and each run ends by its own execution timeout.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { openDatabase } from '../../src/database.ts';
import { HAND_OFF_LEASE_MS, startHandOffReconciler } from '../../src/handoff/reconciler.ts';
import { claimDueHandOffs, insertHandOffs } from '../../src/handoff/store.ts';
import type { Orm } from '../../src/persistence/orm.ts';
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';
import { closeDb, sql } from '../support/db.ts';
import { waitFor } from '../support/wait.ts';

const logger = pino({ level: 'silent' });
let orm: Orm;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  orm = await openDatabase(process.env.TEST_DATABASE_URL!, 4);
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
});

afterAll(async () => {
  await connection.close();
  await orm.close();
  await closeDb();
});

const starts = (n: number): WorkflowStart[] =>
  Array.from({ length: n }, () => ({
    workflowType: 'probeWorkflow',
    workflowId: `handoff-test-${randomUUID()}`,
    args: [],
    searchAttributes: {},
    reusePolicy: 'REJECT_DUPLICATE',
    executionTimeout: '1 minute',
  }));

const rowsOf = (taskQueue: string) => sql<{ key: string }>('select key from workflow_start where task_queue = $1', [taskQueue]);
const isRunning = async (workflowId: string) => (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';

test('every recorded workflow is started, more than one group in a sweep, and its row removed', async () => {
  const taskQueue = `handoff-test-${randomUUID()}`;
  const recorded = starts(40);
  await insertHandOffs(orm.em.fork(), taskQueue, recorded, { dueNow: true });
  const reconciler = startHandOffReconciler(orm, client, taskQueue, logger);
  try {
    await waitFor(async () => (await rowsOf(taskQueue)).length === 0, 20_000, 'every row removed');
  } finally {
    await reconciler.stop();
  }
  expect(await Promise.all(recorded.map((s) => isRunning(s.workflowId)))).toEqual(recorded.map(() => true));
});

test('rows claimed by a reconciler that died are started by another once the lease ends, within seconds', async () => {
  expect(HAND_OFF_LEASE_MS).toBeLessThanOrEqual(10_000);
  const taskQueue = `handoff-test-${randomUUID()}`;
  const [lost] = starts(1);
  await insertHandOffs(orm.em.fork(), taskQueue, [lost!], { dueNow: true });
  // What a reconciler killed mid-sweep leaves: its rows claimed, nothing started.
  const claimedAt = Date.now();
  expect(await claimDueHandOffs(orm.em.fork(), taskQueue, 16, HAND_OFF_LEASE_MS)).toHaveLength(1);
  const reconciler = startHandOffReconciler(orm, client, taskQueue, logger);
  try {
    await waitFor(async () => (await rowsOf(taskQueue)).length === 0, HAND_OFF_LEASE_MS + 10_000, 'the lost row started by the other reconciler');
  } finally {
    await reconciler.stop();
  }
  // Not before the lease ended: two reconcilers never work on one row at once.
  expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(HAND_OFF_LEASE_MS - 1000);
  expect(await isRunning(lost!.workflowId)).toBe(true);
});

test("a workflow type's step before its start: the run is started as the step answers; a step that fails keeps the row, tried again", async () => {
  const taskQueue = `handoff-test-${randomUUID()}`;
  const [start] = starts(1);
  await insertHandOffs(orm.em.fork(), taskQueue, [start!], { dueNow: true });
  const attempts: number[] = [];
  const reconciler = startHandOffReconciler(orm, client, taskQueue, logger, {
    beforeStart: {
      // As a provider that is down twice, then takes the submission.
      probeWorkflow: async (s) => {
        attempts.push(Date.now());
        if (attempts.length <= 2) throw new Error('provider down');
        return { ...s, startDelayMs: 60_000 };
      },
    },
  });
  try {
    await waitFor(async () => (await rowsOf(taskQueue)).length === 0, 20_000, 'the row removed once the step went through');
  } finally {
    await reconciler.stop();
  }
  expect(attempts).toHaveLength(3);
  const history = await client.workflow.getHandle(start!.workflowId).fetchHistory();
  // Started as the step answered: its first task delayed.
  expect(Number(history.events![0]!.workflowExecutionStartedEventAttributes!.firstWorkflowTaskBackoff!.seconds)).toBe(60);
});
