import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { keptFile } from '../../src/shared/kept-file.ts';
import type { ClusterBinaries } from './cluster-binaries.ts';
import { API_INSTANCES, WORKER_INSTANCES, type SHARED_APP_ENV } from './cluster-topology.ts';
import { balancedApis, startLoadBalancer } from './load-balancer.ts';
import { spawnService, waitForHttp, waitForLine, type ManagedProcess } from './processes.ts';
import type { Supervisor } from './supervisor.ts';
import { setUpTemporalSchema, startTemporalClusterServer, startTemporalUi, temporalSqlFrom, type TemporalPorts } from './temporal-cluster-server.ts';

export interface ClusterOptions {
  binaries: ClusterBinaries;
  supervisor: Supervisor;
  /** Generated files (Temporal's and HAProxy's configurations, the workflow bundle) go to `<dataDir>/cluster`. */
  dataDir: string;
  /** The embedded PostgreSQL to run (its data directory and port), unless `env.DATABASE_URL` names another server. */
  embedded: { dir: string; port: number; database: string; fresh: boolean } | null;
  /** Where clients reach the holder and integration APIs (the load balancer) and the sandbox PSP. */
  host: string;
  ports: { holder: number; integration: number; psp: number };
  /** The ports of each api instance (API_INSTANCES of them), on 127.0.0.1 behind the load balancer. */
  apiPorts: { holder: number; integration: number }[];
  temporalPorts: TemporalPorts;
  /** The apps' environment: what the instances must share is completed here (SHARED_APP_ENV). */
  env: NodeJS.ProcessEnv & { TEMPORAL_NAMESPACE: string; JWT_SECRET: string; KEY_PEPPER: string; PIX_PROVIDER_API_KEY: string; PIX_PROVIDER_WEBHOOK_SECRET: string };
  /** Called before a process (re)starts: tests hold one down this way while the supervisor would restart it. */
  beforeStart?: (name: string) => Promise<void>;
  /** 'inherit': the apps write to this process's output (the script); a function: every line of every process (tests). */
  output: 'inherit' | ((name: string, line: string) => void);
  log: (line: string) => void;
}

export interface Cluster {
  env: NodeJS.ProcessEnv;
  holderUrl: string;
  apiUrl: string;
  pspUrl: string;
  temporalAddress: string;
  uiUrl: string;
  /** Each api instance reached directly, past the load balancer. */
  apis: { name: string; holderUrl: string; apiUrl: string }[];
  workers: string[];
  /** The process now running under each name (postgres, temporal, temporal-ui, sandbox-psp, worker-N, api-N, haproxy). */
  current(name: string): ManagedProcess | undefined;
}

/**
 * Starts the production topology on one machine, each process kept by the supervisor (restarted when it dies):
 * PostgreSQL (embedded, or DATABASE_URL), the Temporal server on it with its UI, the migrations, the sandbox PSP,
 * WORKER_INSTANCES workers, API_INSTANCES apis, and HAProxy in front of the apis on the ports clients use.
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const node = process.execPath;
  const clusterDir = join(o.dataDir, 'cluster');
  const processes = new Map<string, ManagedProcess>();
  const keep = async (name: string, start: () => Promise<ManagedProcess>) =>
    o.supervisor.keep({
      name,
      async start() {
        await o.beforeStart?.(name);
        const p = await start();
        processes.set(name, p);
        return p;
      },
    });
  const piped = (name: string) => (line: string) => (typeof o.output === 'function' ? o.output(name, line) : undefined);
  const env: NodeJS.ProcessEnv = { ...o.env };

  if (o.embedded) {
    const { dir, port, database, fresh } = o.embedded;
    let first = true;
    await keep('postgres', async () => {
      const history: string[] = [];
      const args = ['scripts/postgres-server.ts', '--data-dir', dir, '--port', String(port), '--database', database];
      // Wiped at the first start only: a restart after a crash keeps what the cluster wrote.
      if (fresh && first) args.push('--fresh');
      first = false;
      const pg = spawnService({ name: 'postgres', command: node, args, onLine: (line) => (history.push(line), piped('postgres')(line)) });
      const { url } = await waitForLine(pg, (line) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }) : undefined), 120_000, history);
      env.DATABASE_URL = url;
      return pg;
    });
  }
  const databaseUrl = env.DATABASE_URL!;
  // Temporal's driver reaches the embedded server over TCP; the apps keep its Unix socket (half the cost a query).
  const sql = o.embedded ? { host: '127.0.0.1', port: o.embedded.port, user: new URL(databaseUrl).username, password: decodeURIComponent(new URL(databaseUrl).password) } : temporalSqlFrom(databaseUrl);

  setUpTemporalSchema(o.binaries.temporalSqlTool, sql, o.log);
  const namespace = o.env.TEMPORAL_NAMESPACE;
  const temporalDir = join(clusterDir, 'temporal');
  await keep('temporal', () => startTemporalClusterServer({ binary: o.binaries.temporalServer, dir: temporalDir, sql, ports: o.temporalPorts, namespace, log: piped('temporal') }));
  const temporalAddress = `127.0.0.1:${o.temporalPorts.frontend}`;
  const uiUrl = `http://127.0.0.1:${o.temporalPorts.ui}`;
  await keep('temporal-ui', async () => {
    const ui = startTemporalUi(o.binaries.temporalUi, temporalDir, o.temporalPorts, namespace, piped('temporal-ui'));
    await waitForHttp(uiUrl, 30_000, ui.exited);
    return ui;
  });

  const holderUrl = `http://${o.host}:${o.ports.holder}`;
  const apiUrl = `http://${o.host}:${o.ports.integration}`;
  const pspUrl = `http://${o.host}:${o.ports.psp}`;
  const shared: Record<(typeof SHARED_APP_ENV)[number], string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_TASK_QUEUE: env.TEMPORAL_TASK_QUEUE ?? 'banking',
    JWT_SECRET: o.env.JWT_SECRET,
    KEY_PEPPER: o.env.KEY_PEPPER,
    PIX_PROVIDER_URL: env.PIX_PROVIDER_URL ?? pspUrl,
    PIX_PROVIDER_API_KEY: o.env.PIX_PROVIDER_API_KEY,
    PIX_PROVIDER_WEBHOOK_SECRET: o.env.PIX_PROVIDER_WEBHOOK_SECRET,
    // One key for every instance, as production sets it: the one `npm start` generates for this machine, if unset.
    PIX_SIGNING_KEY:
      env.PIX_SIGNING_KEY ??
      keptFile(join(o.dataDir, 'pix-signing-key.pem'), () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    // Charges' locations and the OpenAPI document name the load balancer, never an instance.
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL ?? holderUrl,
    PUBLIC_API_URL: env.PUBLIC_API_URL ?? apiUrl,
    // The apis see HAProxy's address; the client's is in X-Forwarded-For (login limits count per client address).
    TRUST_PROXY: env.TRUST_PROXY ?? 'loopback',
  };
  Object.assign(env, shared);

  const quiet = { ...env, LOG_LEVEL: 'warn' };
  execFileSync(node, ['scripts/migrate.ts'], { env: quiet, stdio: ['ignore', 'ignore', 'inherit'] });
  o.log('database schema up to date');
  if (!env.WORKFLOW_BUNDLE_PATH) {
    // Built once for both workers, instead of by each at its start.
    env.WORKFLOW_BUNDLE_PATH = join(clusterDir, 'workflow-bundle.js');
    execFileSync(node, ['scripts/bundle-workflows.ts', env.WORKFLOW_BUNDLE_PATH], { env: quiet, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  execFileSync(node, ['scripts/register-search-attributes.ts'], { env: quiet, stdio: ['ignore', 'ignore', 'inherit'] });
  o.log(`Temporal namespace ${namespace}: search attributes registered`);

  const app = (name: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
    spawnService({ name, command: node, args, env: { ...env, ...extra }, inheritOutput: o.output === 'inherit', onLine: piped(name) });

  const sandbox = env.SANDBOX === '1' || env.SANDBOX === 'true';
  if (sandbox) {
    const pspEnv = { SANDBOX_PSP_PORT: String(o.ports.psp), SANDBOX_PSP_NOTIFY_URL: env.SANDBOX_PSP_NOTIFY_URL ?? `${apiUrl}/v1/pix/provider/notifications` };
    await keep('sandbox-psp', async () => {
      const psp = app('sandbox-psp', ['src/sandbox/psp/main.ts'], pspEnv);
      await waitForHttp(`${pspUrl}/health`, 60_000, psp.exited);
      return psp;
    });
  }

  const workers = Array.from({ length: WORKER_INSTANCES }, (_, i) => `worker-${i + 1}`);
  await Promise.all(
    workers.map((name) =>
      keep(name, async () => {
        const worker = app(name, ['worker/main.ts']);
        // Tests read readiness from the worker's log; the script lets it start in the background, as `npm start` does.
        if (typeof o.output === 'function') await waitForLine(worker, (line) => (line.includes('"worker started"') ? true : undefined), 60_000, []);
        return worker;
      }),
    ),
  );

  if (o.apiPorts.length !== API_INSTANCES) throw new Error(`${API_INSTANCES} api instances need their ports, ${o.apiPorts.length} given`);
  const apis = o.apiPorts.map((ports, i) => ({ name: `api-${i + 1}`, ports, holderUrl: `http://127.0.0.1:${ports.holder}`, apiUrl: `http://127.0.0.1:${ports.integration}` }));
  await Promise.all(
    apis.map((a) =>
      keep(a.name, async () => {
        // The young generation as `npm start` sizes it (bench/README.md); each instance listens on 127.0.0.1 only.
        const api = app(a.name, ['--max-semi-space-size=32', 'src/main.ts'], { HOST: '127.0.0.1', PORT: String(a.ports.holder), API_PORT: String(a.ports.integration) });
        await waitForHttp(`${a.holderUrl}/openapi.json`, 60_000, api.exited);
        await waitForHttp(`${a.apiUrl}/openapi.json`, 60_000, api.exited);
        return api;
      }),
    ),
  );

  await keep('haproxy', async () => {
    const backends = apis.map((a) => ({ name: a.name, holder: `127.0.0.1:${a.ports.holder}`, integration: `127.0.0.1:${a.ports.integration}` }));
    const lb = startLoadBalancer(o.binaries.haproxy, clusterDir, o.host, balancedApis(o.ports, backends), piped('haproxy'));
    await waitForHttp(`${holderUrl}/openapi.json`, 30_000, lb.exited);
    return lb;
  });

  return {
    env,
    holderUrl,
    apiUrl,
    pspUrl,
    temporalAddress,
    uiUrl,
    apis: apis.map(({ name, holderUrl: h, apiUrl: a }) => ({ name, holderUrl: h, apiUrl: a })),
    workers,
    current: (name) => processes.get(name),
  };
}
