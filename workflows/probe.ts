import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities } from '../activities/probe.ts';
import { PROBE_STEP } from './activity-options.ts';
import type { ProbeOutcome } from './contracts/probe.ts';

const { probeDatabase } = proxyActivities<ProbeActivities>(PROBE_STEP);

/** Operators' end-to-end check (`npm run admin -- system:check`): a worker picks it up and reaches the database. */
export async function probeWorkflow(): Promise<ProbeOutcome> {
  return { databaseTime: await probeDatabase() };
}
