import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities } from '../activities/probe.ts';

const { probeDatabase } = proxyActivities<ProbeActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/** Operators' end-to-end check (`npm run admin -- system:check`): a worker picks it up and reaches the database. */
export async function probeWorkflow(): Promise<{ databaseTime: string }> {
  return { databaseTime: await probeDatabase() };
}
