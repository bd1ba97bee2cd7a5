import { randomBytes } from 'node:crypto';
import { z } from '../shared/zod.ts';
import { startWorkflow } from '../temporal/workflow-start.ts';
import { probeStart, type ProbeOutcome } from '../../workflows/contracts/probe.ts';
import { command } from './command.ts';

export const systemCommands = {
  'system:check': command({
    summary: 'Run a probe workflow through the worker and the database',
    usage: '[--timeout-seconds 30]',
    flags: z.object({ 'timeout-seconds': z.coerce.number().int().min(1).max(600).default(30) }),
    async run({ config, temporal }, f) {
      const { client } = await temporal();
      const started = Date.now();
      const probe = probeStart(started, randomBytes(4).toString('hex'), f['timeout-seconds']);
      await startWorkflow(client, config.TEMPORAL_TASK_QUEUE, probe);
      const result: ProbeOutcome = await client.workflow.getHandle(probe.workflowId).result();
      return { status: 'ok', workflowId: probe.workflowId, databaseTime: result.databaseTime, elapsedMs: Date.now() - started };
    },
  }),
};
