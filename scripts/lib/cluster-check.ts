import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SearchAttributes } from '../../src/temporal/search-attributes.ts';
import { API_INSTANCES, TEMPORAL_SERVER_VERSION, WORKER_INSTANCES } from './cluster-topology.ts';

export interface ClusterAddresses {
  holderUrl: string;
  apiUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** The instance HAProxy says served each of `n` calls to `url` (its `X-Api-Instance` header), with the statuses. */
async function servedBy(url: string, n: number): Promise<{ statuses: number[]; instances: Set<string> }> {
  const statuses: number[] = [];
  const instances = new Set<string>();
  for (let i = 0; i < n; i++) {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    statuses.push(res.status);
    const instance = res.headers.get('x-api-instance');
    if (instance) instances.add(instance);
  }
  return { statuses, instances };
}

/**
 * Whether every part of the cluster answers: each api instance through the load balancer (on both APIs), the Temporal
 * server in this version with the namespace and every search attribute, WORKER_INSTANCES workers polling the task queue
 * for workflow and for activity tasks, and the UI reading the server.
 */
export async function checkCluster(a: ClusterAddresses): Promise<Check[]> {
  const checks: Check[] = [];
  const check = async (name: string, run: () => Promise<string>) => {
    try {
      checks.push({ name, ok: true, detail: await run() });
    } catch (err) {
      checks.push({ name, ok: false, detail: err instanceof Error ? err.message : String(err) });
    }
  };
  for (const [api, url] of [['holder API', a.holderUrl], ['integration API', a.apiUrl]] as const) {
    await check(`${api}: ${API_INSTANCES} instances answer /health through the load balancer`, async () => {
      const { statuses, instances } = await servedBy(`${url}/health`, 4 * API_INSTANCES);
      if (statuses.some((s) => s !== 200)) throw new Error(`statuses ${statuses.join(', ')}`);
      if (instances.size !== API_INSTANCES) throw new Error(`served by ${[...instances].join(', ') || 'no named instance'}`);
      return `served by ${[...instances].sort().join(', ')}`;
    });
  }

  const connection = await Connection.connect({ address: a.temporalAddress, connectTimeout: 5000 }).catch((err: unknown) => err as Error);
  if (connection instanceof Error) {
    checks.push({ name: 'Temporal server', ok: false, detail: connection.message });
  } else {
    try {
      await check(`Temporal server ${TEMPORAL_SERVER_VERSION}`, async () => {
        const { serverVersion } = await connection.workflowService.getSystemInfo({});
        if (serverVersion !== TEMPORAL_SERVER_VERSION) throw new Error(`answers version ${serverVersion}`);
        return `version ${serverVersion} at ${a.temporalAddress}`;
      });
      await check(`namespace ${a.namespace} and its search attributes`, async () => {
        await connection.workflowService.describeNamespace({ namespace: a.namespace });
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: a.namespace });
        const missing = Object.values(SearchAttributes).filter((key) => !(key.name in (customAttributes ?? {})));
        if (missing.length) throw new Error(`missing ${missing.map((k) => k.name).join(', ')}`);
        return `${Object.keys(SearchAttributes).length} search attributes`;
      });
      const { TaskQueueType } = proto.temporal.api.enums.v1;
      for (const [kind, taskQueueType] of [['workflow', TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW], ['activity', TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]] as const) {
        await check(`${WORKER_INSTANCES} workers polling "${a.taskQueue}" for ${kind} tasks`, async () => {
          const { pollers } = await connection.workflowService.describeTaskQueue({ namespace: a.namespace, taskQueue: { name: a.taskQueue }, taskQueueType });
          // A poller is listed for a few minutes after it stops: count the ones seen in the last 30 s.
          const recent = (pollers ?? []).filter((p) => Date.now() - Number(p.lastAccessTime?.seconds ?? 0) * 1000 < 30_000).map((p) => p.identity ?? '?');
          if (new Set(recent).size < WORKER_INSTANCES) throw new Error(`pollers: ${recent.join(', ') || 'none'}`);
          return [...new Set(recent)].join(', ');
        });
      }
    } finally {
      await connection.close();
    }
  }

  await check('Temporal UI reads the server', async () => {
    const page = await fetch(a.uiUrl, { signal: AbortSignal.timeout(5000) });
    if (page.status !== 200 || !(await page.text()).includes('<html')) throw new Error(`${a.uiUrl} answered ${page.status}`);
    const res = await fetch(`${a.uiUrl}/api/v1/namespaces/${encodeURIComponent(a.namespace)}`, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as { namespaceInfo?: { name?: string } };
    if (res.status !== 200 || body.namespaceInfo?.name !== a.namespace) throw new Error(`its API answered ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    return a.uiUrl;
  });
  return checks;
}
