import { z } from '../shared/zod.ts';
import { command } from './command.ts';

export const systemCommands = {
  'system:check': command({
    summary: 'Run a probe workflow through the worker and the database',
    usage: '[--timeout-seconds 30]',
    flags: z.object({ 'timeout-seconds': z.coerce.number().int().min(1).max(600).default(30) }),
    async run({ config, temporal }, f) {
      const { client } = await temporal();
      const started = Date.now();
      const handle = await client.workflow.start('probeWorkflow', {
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        workflowId: `probe-${started}-${Math.random().toString(36).slice(2, 8)}`,
        workflowExecutionTimeout: `${f['timeout-seconds']} seconds`,
      });
      const result = (await handle.result()) as { databaseTime: string };
      return { status: 'ok', workflowId: handle.workflowId, databaseTime: result.databaseTime, elapsedMs: Date.now() - started };
    },
  }),
};
