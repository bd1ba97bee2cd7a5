import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Orm } from '../persistence/orm.ts';
import { startWorkflow, type WorkflowStart } from '../temporal/workflow-start.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import { within } from '../shared/time.ts';
import { claimDueHandOffs, deleteHandOffs, handOffOf, hasDueHandOffs, rescheduleHandOff, type HandOff } from './store.ts';

/**
 * How often an idle reconciler looks for due rows. A Pix debit's hand-off is due at once and waits for the next look,
 * so half of this is added to every payout's time to reach the provider; a look that finds nothing is one indexed
 * statement.
 */
const SWEEP_MS = 250;
/** The most rows one sweep starts before it reports; a full sweep is followed by another at once. */
const SWEEP_MAX = 200;
/** Rows claimed and started together: the lease covers one group, not a whole sweep. */
const GROUP = 16;
/** A start not taken by then counts as failed (and is retried). */
const START_DEADLINE_MS = 5000;
/** A step before a start (`BeforeStart`) not done by then counts as failed (and is retried). */
const BEFORE_START_DEADLINE_MS = 4000;
/**
 * A group's rows are carried out at once, each within its two deadlines, so the group is done within its lease; a
 * reconciler that dies holding rows delays them this long.
 */
export const HAND_OFF_LEASE_MS = 2 * START_DEADLINE_MS;
/** Retries stay this close together, so work resumes within seconds of Temporal coming back. */
const MAX_RETRY_MS = 2000;

export type Reconciler = PollLoop;

/**
 * Work the reconciler does for a row of one workflow type before it starts the run, answering the start to send
 * (a payout's submission to the provider, say, and the run then started to wait). Idempotent: a row whose start is
 * not confirmed is carried out again. Throws when it cannot be done now: the row is tried again later.
 */
export type BeforeStart = (start: WorkflowStart) => Promise<WorkflowStart>;

export interface ReconcilerOptions {
  /** `client` shares its connection with a worker of `taskQueue`, so starts are eager (see `StartOptions`). */
  colocatedWorker?: boolean;
  /** By workflow type. */
  beforeStart?: Readonly<Record<string, BeforeStart>>;
}

const retryDelay = (attempts: number) => Math.min(250 * 2 ** Math.min(attempts, 10), MAX_RETRY_MS);

/**
 * Starts every workflow that was recorded as needed (`workflow_start`) and is not confirmed yet: those whose writer
 * could not reach Temporal, or died before trying, and those written due at once for it to start (a Pix debit's
 * settlement). Several workers may run it at once: rows are claimed with a lease, ids are deterministic, and "already
 * started" counts as done.
 */
export function startHandOffReconciler(orm: Orm, client: Client, taskQueue: string, logger: Logger, options: ReconcilerOptions = {}): Reconciler {
  const { colocatedWorker = false, beforeStart = {} } = options;
  async function carryOut(start: WorkflowStart): Promise<void> {
    const step = beforeStart[start.workflowType];
    // Past its deadline the step counts as failed; it may still finish, and what it does is idempotent.
    const prepared = step ? await within(step(start), BEFORE_START_DEADLINE_MS, `${start.workflowType}'s step before its start not done within ${BEFORE_START_DEADLINE_MS} ms`) : start;
    await startWorkflow(client, taskQueue, prepared, { eager: colocatedWorker, deadlineMs: START_DEADLINE_MS });
  }

  /**
   * One group after the other, each waiting for its starts before the next is claimed: the submissions, and the
   * notifications and wakes that follow them, go at the pace Temporal and the worker take the runs. Four groups at once
   * settled payouts faster than their runs ended: thousands of woken runs waited for the worker a minute after the last
   * payout was final (bench/README.md).
   */
  let foundLastTime = true;
  async function sweep(): Promise<number> {
    const em = orm.em.fork();
    // Idle: four looks a second, each one read-only statement until something is due.
    if (!foundLastTime && !(await hasDueHandOffs(em, taskQueue))) return 0;
    let claimed = 0;
    let failed = 0;
    let lastError = '';
    for (let full = true; full && claimed < SWEEP_MAX; ) {
      const rows = await claimDueHandOffs(em, taskQueue, GROUP, HAND_OFF_LEASE_MS);
      claimed += rows.length;
      const started: HandOff[] = [];
      await Promise.all(
        rows.map(async (row) => {
          const h = handOffOf(row);
          try {
            await carryOut(h.start);
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
      // A start refused (Temporal away, say): the next sweep tries again, not the rest of this one.
      full = rows.length === GROUP && started.length === rows.length;
    }
    foundLastTime = claimed > 0;
    if (claimed > 0) logger.info({ started: claimed - failed, failed, ...(failed ? { lastError } : {}) }, 'hand-off reconciler: workflows started');
    return claimed - failed;
  }

  // A full sweep that went through: look again at once.
  return startPollLoop(SWEEP_MS, async () => (await sweep()) >= SWEEP_MAX, (err) => logger.warn({ err }, 'hand-off reconciler could not sweep; retrying'));
}
