import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ensureClusterBinaries } from '../../scripts/lib/cluster-binaries.ts';
import { API_INSTANCES } from '../../scripts/lib/cluster-topology.ts';
import { startCluster, type Cluster } from '../../scripts/lib/cluster.ts';
import { createSupervisor } from '../../scripts/lib/supervisor.ts';
import { freePort } from '../support/ports.ts';
import { TEST_JWT_SECRET, TEST_KEY_PEPPER, TEST_PIX_PROVIDER_API_KEY, TEST_PIX_PROVIDER_WEBHOOK_SECRET, type Platform } from '../support/platform.ts';
import { testCertificate } from '../support/receiver.ts';
import { isWarning } from './diagnostics.ts';
import type { FaultTarget } from './outcomes.ts';

/**
 * The topology of `npm run start:cluster` on ports of its own, for fault injection: its own PostgreSQL, the real
 * Temporal server on it, two apis behind HAProxy, two workers and the sandbox PSP, each kept by the supervisor as the
 * script keeps it (a killed process is restarted). `kill` can hold a process down for a while first.
 */
export interface ClusterFaultStack extends Pick<Platform, 'holderUrl' | 'apiUrl' | 'pspUrl' | 'env'>, FaultTarget {
  cluster: Cluster;
  /**
   * SIGKILL the process running under `name` (api-1, worker-1, temporal…); the supervisor starts it again `down` ms
   * later, or once `down` settles.
   */
  kill(name: string, down?: number | Promise<unknown>): Promise<void>;
  /** Resolves once `name` runs again (restarted and ready). */
  restarted(name: string): Promise<void>;
  pausePostgres(): void;
  resumePostgres(): void;
  stop(): Promise<void>;
}

export async function startClusterFaultStack(overrides: NodeJS.ProcessEnv = {}): Promise<ClusterFaultStack> {
  const runDir = join('data', `cluster-fault-run-${process.pid}-${randomUUID().slice(0, 8)}`);
  mkdirSync(runDir, { recursive: true });
  const warnings: string[] = [];
  const log = (name: string) => (line: string) => {
    if (isWarning(line)) {
      warnings.push(`${new Date().toISOString().slice(11, 23)} [${name}] ${line}`);
      if (warnings.length > 200) warnings.shift();
    }
    if (process.env.TEST_DEBUG) process.stderr.write(`[${name}] ${line}\n`);
  };
  const supervisor = createSupervisor(log('supervisor'));
  const held = new Map<string, Promise<void>>();
  const port = () => freePort();
  const [frontend, frontendHttp, history, matching, worker, ui] = [await port(), await port(), await port(), await port(), await port(), await port()];
  const membership = [await port(), await port(), await port(), await port()] as [number, number, number, number];
  const apiPorts = [];
  for (let i = 0; i < API_INSTANCES; i++) apiPorts.push({ holder: await port(), integration: await port() });
  const pgDir = join(runDir, 'pg');

  const cluster = await startCluster({
    binaries: ensureClusterBinaries(log('build')),
    supervisor,
    dataDir: runDir,
    embedded: { dir: pgDir, port: await port(), database: 'cluster_faults', fresh: true },
    host: '127.0.0.1',
    ports: { holder: await port(), integration: await port(), psp: await port() },
    apiPorts,
    temporalPorts: { frontend, frontendHttp, history, matching, worker, membership, ui },
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: undefined,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'cluster-faults',
      WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
      JWT_SECRET: TEST_JWT_SECRET,
      KEY_PEPPER: TEST_KEY_PEPPER,
      PIX_PROVIDER_API_KEY: TEST_PIX_PROVIDER_API_KEY,
      PIX_PROVIDER_WEBHOOK_SECRET: TEST_PIX_PROVIDER_WEBHOOK_SECRET,
      SANDBOX: '1',
      OUTBOX_RELAY: '1',
      WEBHOOK_CA_FILE: testCertificate().certFile,
      LOG_LEVEL: 'info',
      ...overrides,
    },
    beforeStart: async (name) => held.get(name),
    output: (name, line) => log(name)(line),
    log: log('cluster'),
  });

  const pool = new pg.Pool({ connectionString: cluster.env.DATABASE_URL, max: 3 });
  // A connection the pause drops is replaced at the next query; without a listener its 'error' fails the test file.
  pool.on('error', () => undefined);
  const postmaster = () => Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const backends = (pid: number) => execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  // A backend may end between the listing and the signal (its client gave up): that one needs no signal.
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  };
  const killed = new Map<string, unknown>();

  return {
    cluster,
    holderUrl: cluster.holderUrl,
    apiUrl: cluster.apiUrl,
    pspUrl: cluster.pspUrl,
    env: cluster.env,
    recentWarnings: () => [...warnings],
    async sql<T = any>(text: string, params: unknown[] = []) {
      return (await pool.query(text, params)).rows as T[];
    },
    async kill(name, down = 0) {
      const p = cluster.current(name);
      if (!p) throw new Error(`no process ${name}`);
      held.set(name, typeof down === 'number' ? new Promise((resolve) => setTimeout(resolve, down)) : down.then(() => undefined, () => undefined));
      killed.set(name, p);
      p.child.kill('SIGKILL');
      await p.exited;
    },
    async restarted(name) {
      const deadline = Date.now() + 120_000;
      while (cluster.current(name) === killed.get(name) || cluster.current(name)?.child.exitCode !== null) {
        if (Date.now() > deadline) throw new Error(`${name} did not come back`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    // The postmaster first, so that it forks no backend the listing would miss; resumed last.
    pausePostgres() {
      const pid = postmaster();
      signal(pid, 'SIGSTOP');
      for (const backend of backends(pid)) signal(backend, 'SIGSTOP');
    },
    resumePostgres() {
      const pid = postmaster();
      for (const backend of backends(pid)) signal(backend, 'SIGCONT');
      signal(pid, 'SIGCONT');
    },
    async stop() {
      await supervisor.stopAll();
      await pool.end();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}
