import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared } from '../persistence/prepared.ts';
import type { WorkflowStart } from '../temporal/workflow-start.ts';

/** One row of `workflow_start`: a workflow that must run (or be woken) and has not been confirmed by Temporal. */
export interface HandOffRow {
  key: string;
  task_queue: string;
  workflow_type: string;
  workflow_id: string;
  args: unknown[];
  search_attributes: WorkflowStart['searchAttributes'];
  reuse_policy: WorkflowStart['reusePolicy'];
  signal: string | null;
  signal_args: unknown[] | null;
  version: number;
  attempts: number;
}

/** A recorded hand-off: what to start, and which version of the row a confirmation removes. */
export interface HandOff {
  key: string;
  version: number;
  taskQueue: string;
  start: WorkflowStart;
}

export function handOffOf(row: HandOffRow): HandOff {
  return {
    key: row.key,
    version: row.version,
    taskQueue: row.task_queue,
    start: {
      workflowType: row.workflow_type,
      workflowId: row.workflow_id,
      args: row.args,
      searchAttributes: row.search_attributes,
      reusePolicy: row.reuse_policy,
      ...(row.signal ? { signal: { name: row.signal, args: row.signal_args ?? [] } } : {}),
    },
  };
}

/**
 * Records that the workflow must run, in the caller's transaction. Recording the same one again (a retried request,
 * a second wake) bumps its version, so a start or signal already under way does not cancel the newer request.
 */
export async function insertHandOff(em: EntityManager, taskQueue: string, s: WorkflowStart): Promise<HandOff> {
  const [h] = await insertHandOffs(em, taskQueue, [s]);
  return h!;
}

/**
 * Several at once, in one statement: `record_workflow_starts` (src/ledger/sql/rules.sql), which the posting functions
 * that hand a payment to its workflow call too. `dueNow`: for a writer that leaves the start to the reconciler of
 * its own process (the outbox relay) instead of starting each one itself.
 */
export async function insertHandOffs(em: EntityManager, taskQueue: string, starts: WorkflowStart[], options: { dueNow?: boolean } = {}): Promise<HandOff[]> {
  if (starts.length === 0) return [];
  const rows = await em.execute<{ key: string; version: number }[]>('select key, version from record_workflow_starts(?::jsonb, ?)', [
    JSON.stringify(starts.map((s) => ({ ...s, taskQueue }))),
    options.dueNow ?? false,
  ]);
  return starts.map((s, i) => ({ key: rows[i]!.key, version: rows[i]!.version, taskQueue, start: s }));
}

/** Temporal has it: the row goes, unless it was requested again meanwhile. */
export const deleteHandOff = (em: EntityManager, h: Pick<HandOff, 'key' | 'version'>): Promise<void> => deleteHandOffs(em, [h]);

/** Several confirmed at once, each unless requested again meanwhile. */
export async function deleteHandOffs(em: EntityManager, handOffs: Pick<HandOff, 'key' | 'version'>[]): Promise<void> {
  if (handOffs.length === 0) return;
  await em.execute(
    `delete from workflow_start w using (values ${handOffs.map(() => '(?, ?::int)').join(', ')}) as done(key, version)
      where w.key = done.key and w.version = done.version`,
    handOffs.flatMap((h) => [h.key, h.version]),
  );
}

/**
 * Claims due rows of one task queue for a lease, so that several reconcilers never work on the same row at once
 * (SKIP LOCKED) and a reconciler that dies mid-batch only delays its rows until the lease ends.
 */
export async function claimDueHandOffs(em: EntityManager, taskQueue: string, limit: number, leaseMs: number): Promise<HandOffRow[]> {
  return em.execute<HandOffRow[]>(
    `update workflow_start set attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => ?::double precision / 1000)
      where key in (select key from workflow_start where task_queue = ? and next_attempt_at <= now()
                     order by next_attempt_at limit ? for update skip locked)
      returning *`,
    [leaseMs, taskQueue, limit],
  );
}

/**
 * Whether a claim would find a due row: one prepared statement, read-only (a claim is an update, sent unprepared). An
 * idle reconciler asks only this between its looks.
 */
export async function hasDueHandOffs(em: EntityManager, taskQueue: string): Promise<boolean> {
  const [row] = await queryPrepared<{ due: boolean }>(
    em,
    'handoff-due',
    'select exists (select 1 from workflow_start where task_queue = $1 and next_attempt_at <= now()) as due',
    [taskQueue],
  );
  return row!.due;
}

/** Not taken this time: try again after `delayMs`. */
export async function rescheduleHandOff(em: EntityManager, h: Pick<HandOff, 'key' | 'version'>, delayMs: number, error: string): Promise<void> {
  await em.execute(
    `update workflow_start set next_attempt_at = now() + make_interval(secs => ?::double precision / 1000), last_error = ?
      where key = ? and version = ?`,
    [delayMs, error.slice(0, 1000), h.key, h.version],
  );
}
