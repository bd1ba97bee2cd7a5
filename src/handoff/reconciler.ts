import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Orm } from '../persistence/orm.ts';
import { startWorkflow } from '../temporal/workflow-start.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import { claimDueHandOffs, deleteHandOffs, handOffOf, rescheduleHandOff, type HandOff } from './store.ts';

const SWEEP_MS = 1000;
const BATCH = 200;
const PARALLEL = 16;
/** Long enough for a batch of starts; a reconciler that dies holding rows delays them this long. */
const LEASE_MS = 60_000;
/** Retries stay this close together, so work resumes within seconds of Temporal coming back. */
const MAX_RETRY_MS = 2000;

export type Reconciler = PollLoop;

const retryDelay = (attempts: number) => Math.min(250 * 2 ** Math.min(attempts, 10), MAX_RETRY_MS);

/**
 * Starts every workflow that was recorded as needed (`workflow_start`) and is not confirmed yet: those whose writer
 * could not reach Temporal, or died before trying, and those written due at once for it to start (a Pix debit's
 * settlement). Several workers may run it at once: rows are claimed with a lease, ids are deterministic, and "already
 * started" counts as done. `colocatedWorker`: `client` shares its connection with a worker of `taskQueue`, so starts
 * are eager (see `StartOptions`).
 */
export function startHandOffReconciler(orm: Orm, client: Client, taskQueue: string, logger: Logger, colocatedWorker = false): Reconciler {
  async function sweep(): Promise<number> {
    const em = orm.em.fork();
    const rows = await claimDueHandOffs(em, taskQueue, BATCH, LEASE_MS);
    let failed = 0;
    let lastError = '';
    for (let i = 0; i < rows.length; i += PARALLEL) {
      const started: HandOff[] = [];
      await Promise.all(
        rows.slice(i, i + PARALLEL).map(async (row) => {
          const h = handOffOf(row);
          try {
            await startWorkflow(client, taskQueue, h.start, { eager: colocatedWorker });
            started.push(h);
          } catch (err) {
            failed++;
            lastError = err instanceof Error ? err.message : String(err);
            await rescheduleHandOff(em, h, retryDelay(row.attempts), lastError);
          }
        }),
      );
      // One statement for the group: a row left by a crash here only costs the next sweep an idempotent start.
      await deleteHandOffs(em, started);
    }
    if (rows.length > 0) logger.info({ started: rows.length - failed, failed, ...(failed ? { lastError } : {}) }, 'hand-off reconciler: workflows started');
    return rows.length - failed;
  }

  // A full batch that went through: look again at once.
  return startPollLoop(SWEEP_MS, async () => (await sweep()) >= BATCH, (err) => logger.warn({ err }, 'hand-off reconciler could not sweep; retrying'));
}
