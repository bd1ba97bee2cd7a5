import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, type LogLevel, type LogMetadata } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';

const require = createRequire(import.meta.url);
let runtimeInstalled = false;

/** Creates the worker for the platform's task queue; `run()` it and it stops on SIGINT/SIGTERM after draining. */
export async function createWorker(deps: ActivityDeps): Promise<{ worker: Worker; connection: NativeConnection }> {
  const { config, logger } = deps;
  if (!runtimeInstalled) {
    Runtime.install({ logger: sdkLogger(logger) });
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const workflowSource = config.WORKFLOW_BUNDLE_PATH
    ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } }
    : { workflowsPath: require.resolve('../workflows/index.ts') };
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...workflowSource,
    activities: createActivities(deps),
    // On SIGTERM, activities in flight finish (they are short) instead of waiting out their timeout on another worker.
    shutdownGraceTime: '10 seconds',
    // Nearly every run here is new and short (a transfer, a delivery): its first task comes from the non-sticky
    // queue, which by default gets only 2 of 10 pollers. Poll it as much as the sticky one.
    maxConcurrentWorkflowTaskPolls: 20,
    nonStickyToStickyPollRatio: 1,
  });
  return { worker, connection };
}

/** Routes the SDK's own log lines into the same structured JSON log as everything else. */
function sdkLogger(logger: Logger) {
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => logger[levels[level]]({ sdk: meta }, message);
  return {
    log,
    trace: (m: string, meta?: LogMetadata) => log('TRACE', m, meta),
    debug: (m: string, meta?: LogMetadata) => log('DEBUG', m, meta),
    info: (m: string, meta?: LogMetadata) => log('INFO', m, meta),
    warn: (m: string, meta?: LogMetadata) => log('WARN', m, meta),
    error: (m: string, meta?: LogMetadata) => log('ERROR', m, meta),
  };
}
