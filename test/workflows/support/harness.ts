/**
 * Workflow tests: the real workflow code, on a worker whose activities are stubs that record their calls, against a
 * local Temporal server.
 *
 * Not time skipping: `TestWorkflowEnvironment.createTimeSkipping` runs the Java test server, which the SDK downloads
 * from temporal.download (or Maven Central), and neither is reachable where these tests run. So the environment is
 * `createLocal` with the Temporal CLI the other suites use, and timers are made short through the workflows' own
 * business inputs (an `expiresAt` 2 s away, a `nextDueInMs` of 300, a small `pollMs`), never through hidden settings.
 */
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { ensureTemporalBinary } from '../../../scripts/lib/temporal-binary.ts';
import { SearchAttributes } from '../../../src/temporal/search-attributes.ts';
import type { ActivityLog } from './stubs.ts';

export type WorkflowCode = Pick<WorkerOptions, 'workflowBundle'>;

let code: Promise<WorkflowCode> | undefined;

/** The workflow bundle: the one jest's global setup built from workflows/, or a fresh bundle (outside jest). */
export function workflowCode(): Promise<WorkflowCode> {
  const prebuilt = process.env.TEST_WORKFLOW_BUNDLE;
  code ??= prebuilt
    ? Promise.resolve({ workflowBundle: { codePath: prebuilt } })
    : bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('../../../workflows/index.ts', import.meta.url)), logger: new DefaultLogger('WARN') }).then(
        (bundle) => ({ workflowBundle: bundle }),
      );
  return code;
}

export interface WorkflowHarness {
  client: Client;
  /**
   * Runs `scenario` while a worker with the real workflows and these activities polls a task queue of its own, or
   * `taskQueue` when given: the queue of an earlier worker, as a worker restarted in its place.
   */
  withWorker<T>(activities: object, scenario: (taskQueue: string) => Promise<T>, taskQueue?: string): Promise<T>;
  teardown(): Promise<void>;
}

let runtimeInstalled = false;

/** The SDK logs every worker start and stop at INFO; the tests only want problems. Before any worker is created. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
}

let taskQueues = 0;

/** One local Temporal server (in memory, the platform's search attributes registered) for a test file. */
export async function startHarness(): Promise<WorkflowHarness> {
  quietRuntime();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureTemporalBinary((line) => process.stderr.write(`${line}\n`)) },
      searchAttributes: Object.values(SearchAttributes),
      // The server fires a timer no sooner than this after it is scheduled (1 s by default): short business timers
      // (a 50 ms poll) would each take a second.
      extraArgs: ['--dynamic-config-value', 'history.timerProcessorMaxTimeShift="10ms"'],
    },
  });
  const workflows = await workflowCode();
  return {
    client: env.client,
    async withWorker(activities, scenario, taskQueue = `workflow-test-${process.pid}-${++taskQueues}`) {
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, ...workflows, activities });
      return worker.runUntil(scenario(taskQueue));
    },
    teardown: () => env.teardown(),
  };
}

/** What one scenario did: its result, the activities it called, and the workflows whose histories it made. */
export interface ScenarioRun<R> {
  result: R;
  log: ActivityLog;
  workflowIds: string[];
}

/** Every run of a workflow id, first to last: each run continued as new names the one before it. */
export async function runHistories(client: Client, workflowId: string): Promise<temporal.api.history.v1.IHistory[]> {
  const histories: temporal.api.history.v1.IHistory[] = [];
  let runId: string | undefined;
  do {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (runId);
  return histories;
}
