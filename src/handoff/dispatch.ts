import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Orm } from '../persistence/orm.ts';
import { startWorkflow, type WorkflowStart } from '../temporal/workflow-start.ts';
import { deleteHandOff, insertHandOff, type HandOff } from './store.ts';

/**
 * Carries out a recorded hand-off now, after its transaction committed: starts (or wakes) the workflow and removes
 * the row once Temporal has it. Never throws: whatever is not done here, the reconciler does.
 */
export async function dispatchHandOff(client: Client, em: EntityManager, handOff: HandOff): Promise<boolean> {
  try {
    await startWorkflow(client, handOff.taskQueue, handOff.start);
  } catch {
    return false;
  }
  await confirmHandOff(em, handOff);
  return true;
}

/** Temporal has the run (for example, an Update-with-Start answered): the row is no longer needed. */
export async function confirmHandOff(em: EntityManager, handOff: HandOff): Promise<void> {
  // A row left behind only costs the reconciler one idempotent start.
  await deleteHandOff(em, handOff).catch(() => undefined);
}

const RETRY_MS = 1000;

/**
 * For work whose own record may not have committed (an uncertain outcome): PostgreSQL and Temporal are both asked,
 * and either one taking it is enough. When neither answers, this process keeps asking until one does; only a crash of
 * this process during an outage of both can then lose it, and the client, told `submitted_unknown`, may retry safely.
 */
export function handOffUncertain(client: Client, orm: Orm, taskQueue: string, start: WorkflowStart, logger: Logger): void {
  const attempt = async (count: number): Promise<void> => {
    const em = orm.em.fork();
    const [recorded, started] = await Promise.allSettled([insertHandOff(em, taskQueue, start), startWorkflow(client, taskQueue, start)]);
    if (recorded.status === 'fulfilled' && started.status === 'fulfilled') await confirmHandOff(em, recorded.value);
    if (recorded.status === 'fulfilled' || started.status === 'fulfilled') return;
    if (count === 1) logger.error({ workflowId: start.workflowId, err: started.reason }, 'neither PostgreSQL nor Temporal takes the hand-off; retrying');
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    return attempt(count + 1);
  };
  void attempt(1);
}
