import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { within } from '../../src/shared/time.ts';
import { onboardingWorkflowId } from '../../workflows/contracts/onboarding.ts';
import { tevWorkflowId } from '../../workflows/contracts/tev.ts';
import { webhookEndpointWorkflowId } from '../../workflows/contracts/webhook-endpoint.ts';

/** What the report reads: the platform's database, its Temporal, and the recent warnings of its processes. */
export interface DiagnosedTarget {
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  env: NodeJS.ProcessEnv;
  /** The last lines the platform's processes logged at warning level or above (or not as JSON). */
  recentWarnings?(): string[];
}

const PART_DEADLINE_MS = 5000;

/**
 * Where the work a fault test waits for is held back, for its failure message: which database sessions are busy or
 * blocked (and by whom), who polls the task queue and how long its backlog is, what a few of the unfinished
 * operations' runs wait for, and what the processes warned about last. A fault that leaves work stuck only now and
 * then (the cluster suite's worker kill did, in 2 of about 10 CI runs) is then explained by the run that showed it.
 * Each part is bounded and reports its own failure, so the report never hides the test's.
 */
export async function stuckWorkReport(target: DiagnosedTarget, tenantId: string): Promise<string> {
  const parts = await Promise.all([
    part('database sessions', () => databaseSessions(target)),
    part('task queue', () => withTemporal(target, (client) => taskQueue(client, target.env.TEMPORAL_TASK_QUEUE ?? 'banking'))),
    part('unfinished runs', () => withTemporal(target, (client) => unfinishedRuns(target, client, tenantId))),
  ]);
  const warnings = target.recentWarnings?.().slice(-40) ?? [];
  return [...parts, `recent warnings:\n${warnings.map((l) => `  ${l.slice(0, 400)}`).join('\n') || '  none'}`].join('\n');
}

async function part(name: string, read: () => Promise<string[]>): Promise<string> {
  try {
    const lines = await within(read(), PART_DEADLINE_MS);
    return `${name}:\n${lines.map((l) => `  ${l}`).join('\n') || '  none'}`;
  } catch (err) {
    return `${name}: could not be read (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function databaseSessions(target: DiagnosedTarget): Promise<string[]> {
  const rows = await target.sql(
    `select pid, application_name, state, wait_event_type, wait_event, pg_blocking_pids(pid) as blocked_by,
            round(extract(epoch from now() - xact_start)::numeric, 1) as xact_s, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
       from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend' and state <> 'idle'
      order by xact_start nulls last`,
  );
  return rows.map((r) => `${r.pid} ${r.application_name || '-'} ${r.state} wait=${r.wait_event_type ?? '-'}/${r.wait_event ?? '-'} blocked_by=[${r.blocked_by}] xact=${r.xact_s ?? '-'}s ${r.query}`);
}

async function withTemporal(target: DiagnosedTarget, read: (client: Client) => Promise<string[]>): Promise<string[]> {
  const connection = await Connection.connect({ address: target.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', connectTimeout: PART_DEADLINE_MS });
  try {
    return await read(new Client({ connection, namespace: target.env.TEMPORAL_NAMESPACE ?? 'default' }));
  } finally {
    await connection.close();
  }
}

async function taskQueue(client: Client, name: string): Promise<string[]> {
  const { TaskQueueType } = proto.temporal.api.enums.v1;
  const lines: string[] = [];
  for (const [kind, taskQueueType] of [['workflow', TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW], ['activity', TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]] as const) {
    const res = await client.workflowService.describeTaskQueue({ namespace: client.options.namespace, taskQueue: { name }, taskQueueType, reportStats: true });
    const pollers = (res.pollers ?? []).map((p) => `${p.identity} (last ${p.lastAccessTime ? new Date(Number(p.lastAccessTime.seconds) * 1000).toISOString().slice(11, 19) : '?'})`);
    lines.push(`${kind}: backlog ${res.stats?.approximateBacklogCount ?? '?'}, pollers ${pollers.join(', ') || 'none'}`);
  }
  return lines;
}

/** A few runs of each kind of unfinished operation: their status, their pending workflow task and activities. */
async function unfinishedRuns(target: DiagnosedTarget, client: Client, tenantId: string): Promise<string[]> {
  const ids = [
    ...(await target.sql(`select id from tev_transfer where tenant_id = $1 and status = 'PROCESSING' limit 2`, [tenantId])).map((r) => tevWorkflowId(r.id)),
    ...(await target.sql(`select h.id from holder h where h.tenant_id = $1 and not exists (select 1 from account a where a.holder_id = h.id) limit 2`, [tenantId])).map((r) =>
      onboardingWorkflowId(r.id),
    ),
    ...(await target.sql(`select distinct endpoint_id from webhook_delivery where status = 'PENDING' limit 2`)).map((r) => webhookEndpointWorkflowId(r.endpoint_id)),
  ];
  return Promise.all(
    ids.map(async (id) => {
      try {
        const { raw } = await client.workflow.getHandle(id).describe();
        const status = proto.temporal.api.enums.v1.WorkflowExecutionStatus[raw.workflowExecutionInfo?.status ?? 0];
        const task = raw.pendingWorkflowTask;
        const taskText = task ? `task ${proto.temporal.api.enums.v1.PendingWorkflowTaskState[task.state ?? 0]} attempt ${task.attempt}` : 'no task';
        const activities = (raw.pendingActivities ?? []).map(
          (a) => `${a.activityType?.name} ${proto.temporal.api.enums.v1.PendingActivityState[a.state ?? 0]} attempt ${a.attempt} ${a.lastFailure?.message?.slice(0, 120) ?? ''}`,
        );
        return `${id}: ${status}, history ${raw.workflowExecutionInfo?.historyLength}, ${taskText}${activities.length ? `, activities: ${activities.join('; ')}` : ''}`;
      } catch (err) {
        return `${id}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }),
  );
}

/** A process's log line worth a failure message: JSON at warning level or above, or a plain line that says so. */
export function isWarning(line: string): boolean {
  if (line.startsWith('{')) {
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 40;
    } catch {
      return false;
    }
  }
  return /\b(WARN|WARNING|ERROR|FATAL|PANIC|panic)\b/.test(line);
}
