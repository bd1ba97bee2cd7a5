import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Latencies, since } from '../lib/stats.ts';
import { floorActivities } from './activities.ts';
import { done, floorWorkflow } from './workflow.ts';

const require = createRequire(import.meta.url);

export interface FloorResult {
  completed: number;
  elapsedMs: number;
  latencies: Latencies;
  errors: number;
}

/**
 * Empty workflows per second on the platform's Temporal server: a worker of its own in this process (task queue of
 * its own), `clients` loops each running Update-with-Start back to back for `seconds`. Whatever a design does per
 * workflow, it cannot go faster than this.
 */
export async function measureTemporalFloor(address: string, namespace: string, clients: number, seconds: number): Promise<FloorResult> {
  // The bench prints figures, not the SDK's and bundler's progress lines.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const taskQueue = `bench-floor-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('./workflow.ts'),
    bundlerOptions: { webpackConfigHook: (config) => ({ ...config, stats: 'none', infrastructureLogging: { level: 'none' } }) },
    activities: floorActivities,
    maxConcurrentWorkflowTaskPolls: 20,
    nonStickyToStickyPollRatio: 1,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const result: FloorResult = { completed: 0, elapsedMs: 0, latencies: new Latencies(), errors: 0 };
  try {
    const start = performance.now();
    const deadline = start + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < deadline) {
          const t = performance.now();
          try {
            const op = new WithStartWorkflowOperation(floorWorkflow, { workflowId: `floor-${randomUUID()}`, taskQueue, workflowIdConflictPolicy: 'FAIL' });
            await client.workflow.executeUpdateWithStart(done, { startWorkflowOperation: op });
            result.latencies.add(since(t));
            result.completed++;
          } catch {
            result.errors++;
          }
        }
      }),
    );
    result.elapsedMs = since(start);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await workerConnection.close();
  }
  return result;
}
