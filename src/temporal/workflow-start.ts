import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { SearchAttributeType, type Duration, type SearchAttributePair, type UpdateDefinition } from '@temporalio/common';
import { SearchAttributes } from './search-attributes.ts';

export type SearchAttributeName = keyof typeof SearchAttributes;

/**
 * Everything needed to start (or wake) one workflow, as plain data: the hand-off stores it in PostgreSQL, and any
 * process can carry it out later with the same result. Each workflow's contract module builds its own.
 */
export interface WorkflowStart {
  workflowType: string;
  /** Deterministic, from business ids: starting twice joins the same run. */
  workflowId: string;
  args: unknown[];
  searchAttributes: Partial<Record<SearchAttributeName, string>>;
  /**
   * Whether a closed run may be started again: never (`REJECT_DUPLICATE`), only when it failed or was terminated
   * before finishing its work (`ALLOW_DUPLICATE_FAILED_ONLY`), or always (`ALLOW_DUPLICATE`: an operator's redelivery).
   */
  reusePolicy: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY' | 'ALLOW_DUPLICATE';
  /** A wake: signal-with-start, for a long-running workflow that must look at new work. */
  signal?: { name: string; args: unknown[] };
  /** Only for runs nobody waits on durably (the operators' probe): Temporal ends the run after this. */
  executionTimeout?: Duration;
  /**
   * The run's first workflow task waits this long (Temporal's start delay), unless a signal-with-start comes first
   * (a plain signal waits with it). Set when the row is started, never stored with it.
   */
  startDelayMs?: number;
}

const typedSearchAttributes = (s: WorkflowStart): SearchAttributePair[] =>
  Object.entries(s.searchAttributes).map(([name, value]) => {
    const key = SearchAttributes[name as SearchAttributeName];
    return { key, value: key.type === SearchAttributeType.KEYWORD_LIST ? [value] : value } as SearchAttributePair;
  });

const options = (s: WorkflowStart, taskQueue: string) => ({
  workflowId: s.workflowId,
  taskQueue,
  args: s.args,
  workflowIdConflictPolicy: 'USE_EXISTING' as const,
  workflowIdReusePolicy: s.reusePolicy,
  typedSearchAttributes: typedSearchAttributes(s),
  ...(s.executionTimeout ? { workflowExecutionTimeout: s.executionTimeout } : {}),
  ...(s.startDelayMs ? { startDelay: s.startDelayMs } : {}),
});

/** The run already exists, or existed and closed: for a deterministic id, the work is in Temporal's hands. */
export const isAlreadyStarted = (err: unknown): boolean => err instanceof WorkflowExecutionAlreadyStartedError;

/**
 * How a start is sent. `eager`: only for a client on the same NativeConnection as a worker of the task queue (the
 * worker process's hand-off reconciler): the server then hands the run's first workflow task back in its answer to
 * that worker, instead of through its matching service; measured on a burst of Pix payouts, a quarter less Temporal
 * CPU per payout (bench/README.md). A worker without a free slot gets it the usual way. Not for a delayed start, whose
 * first task is not due yet.
 */
export interface StartOptions {
  deadlineMs?: number;
  eager?: boolean;
}

/**
 * Starts the workflow, joins its running run, or (a wake) signals it, starting it if needed. "Already started" counts
 * as done. Throws when Temporal did not take it (unreachable, deadline passed).
 */
export async function startWorkflow(client: Client, taskQueue: string, s: WorkflowStart, { deadlineMs = 5000, eager = false }: StartOptions = {}): Promise<void> {
  try {
    await client.withDeadline(Date.now() + deadlineMs, async () => {
      if (s.signal) {
        const { workflowIdConflictPolicy: _, ...start } = options(s, taskQueue);
        await client.workflow.signalWithStart(s.workflowType, { ...start, signal: s.signal.name, signalArgs: s.signal.args });
      } else {
        await client.workflow.start(s.workflowType, { ...options(s, taskQueue), ...(eager && !s.startDelayMs ? { requestEagerStart: true } : {}) });
      }
    });
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
  }
}

/** Update-with-Start: starts or joins the workflow and returns its update's answer. Throws what Temporal says. */
export async function executeUpdateWithStart<R, A extends unknown[]>(
  client: Client,
  taskQueue: string,
  s: WorkflowStart,
  update: UpdateDefinition<R, A>,
  deadlineMs: number,
  args?: A,
): Promise<R> {
  const startWorkflowOperation = new WithStartWorkflowOperation(s.workflowType, options(s, taskQueue));
  return client.withDeadline(Date.now() + deadlineMs, () =>
    client.workflow.executeUpdateWithStart(update, { startWorkflowOperation, ...(args ? { args } : {}) } as Parameters<typeof client.workflow.executeUpdateWithStart<never, R, A>>[1]),
  );
}

/**
 * Update-with-Start with a deadline (early return). Null when no answer came in time, or Temporal could not be
 * reached: the caller answers with what it knows, and the hand-off makes sure the run happens.
 */
export async function startWithUpdate<R>(client: Client, taskQueue: string, s: WorkflowStart, update: UpdateDefinition<R, []>, deadlineMs: number): Promise<R | null> {
  try {
    return await executeUpdateWithStart(client, taskQueue, s, update, deadlineMs);
  } catch {
    return null;
  }
}
