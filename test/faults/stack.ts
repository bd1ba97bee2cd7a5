import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { spawnService, waitForHttp, waitForLine, type ManagedProcess } from '../../scripts/lib/processes.ts';
import { ensureTemporalBinary } from '../../scripts/lib/temporal-binary.ts';
import { startTemporalDevServer, type TemporalDevServerOptions } from '../../scripts/lib/temporal-server.ts';
import { pspEnv, TEST_PIX_PROVIDER_API_KEY, TEST_PIX_PROVIDER_WEBHOOK_SECRET, type Platform } from '../support/platform.ts';
import { freePort } from '../support/ports.ts';
import { testCertificate } from '../support/receiver.ts';
import { isWarning } from './diagnostics.ts';

/**
 * A platform of its own for fault injection: its own PostgreSQL (so pausing it disturbs no other test file), its own
 * Temporal dev server with a history file (so it can be restarted), and a TCP proxy between the api and Temporal that
 * can be cut. The api and the worker are real processes that can be killed.
 */
export interface FaultStack extends Platform {
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  recentWarnings(): string[];
  temporalProxy: { cut(): Promise<void>; restore(): Promise<void> };
  killApi(): Promise<void>;
  startApi(): Promise<void>;
  killWorker(): Promise<void>;
  restartTemporal(): Promise<void>;
  /** Kills the Temporal dev server (SIGKILL) until `startTemporal`, which brings it back on its port with its history. */
  stopTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  pausePostgres(): void;
  resumePostgres(): void;
}

/** A TCP proxy whose listening socket and connections can be dropped and brought back on the same port. */
async function tcpProxy(targetPort: number): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const cut = async () => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

export async function startFaultStack(overrides: NodeJS.ProcessEnv = {}): Promise<FaultStack> {
  const runDir = join('data', `fault-run-${process.pid}-${randomUUID().slice(0, 8)}`);
  mkdirSync(runDir, { recursive: true });
  const history: string[] = [];
  const log = (name: string) => (line: string) => {
    history.push(`[${name}] ${line}`);
    if (history.length > 500) history.shift();
    if (process.env.TEST_DEBUG) process.stderr.write(`[${name}] ${line}\n`);
  };

  const pgDir = join(runDir, 'pg');
  const postgres = spawnService({
    name: 'postgres',
    command: process.execPath,
    args: ['scripts/postgres-server.ts', '--data-dir', pgDir, '--port', String(await freePort()), '--database', 'faults', '--fresh'],
    onLine: log('postgres'),
  });
  const { url: databaseUrl } = await waitForLine(postgres, (l) => (l.startsWith('{"url"') ? (JSON.parse(l) as { url: string }) : undefined), 120_000, history);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  // The suite's own connections for its checks: an idle one the server drops (the faults do that) is replaced at the
  // next query; without a listener the pool's 'error' event fails the whole test file, whatever the platform did.
  pool.on('error', () => undefined);

  const temporalOptions: TemporalDevServerOptions = {
    binary: ensureTemporalBinary(log('temporal')),
    port: await freePort(),
    uiPort: null,
    dbFile: join(runDir, 'temporal.db'),
    namespace: 'default',
    log: log('temporal'),
  };
  let temporal = await startTemporalDevServer(temporalOptions);
  const proxy = await tcpProxy(temporalOptions.port);

  const [port, apiPort, pspPort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
    TEMPORAL_TASK_QUEUE: 'faults',
    PORT: String(port),
    API_PORT: String(apiPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...pspEnv(pspPort, apiPort),
    PIX_PROVIDER_API_KEY: TEST_PIX_PROVIDER_API_KEY,
    PIX_PROVIDER_WEBHOOK_SECRET: TEST_PIX_PROVIDER_WEBHOOK_SECRET,
    SANDBOX: '1',
    OUTBOX_RELAY: '1',
    WEBHOOK_CA_FILE: testCertificate().certFile,
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'info',
    ...overrides,
  };
  execFileSync(process.execPath, ['scripts/migrate.ts'], { env: { ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });

  let api: ManagedProcess | null = null;
  let worker: ManagedProcess | null = null;
  let psp: ManagedProcess | null = null;
  const pspUrl = `http://127.0.0.1:${pspPort}`;
  // The sandbox PSP stays up through every fault: it stands for the Pix network, which none of them touches.
  const startPsp = async () => {
    psp = spawnService({ name: 'sandbox-psp', command: process.execPath, args: ['src/sandbox/psp/main.ts'], env, onLine: log('sandbox-psp') });
    await waitForHttp(`${pspUrl}/health`, 60_000, psp.exited);
  };
  const startApi = async () => {
    // The api reaches Temporal only through the proxy that case (a) cuts.
    api = spawnService({ name: 'api', command: process.execPath, args: ['src/main.ts'], env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` }, onLine: log('api') });
    await waitForHttp(`http://127.0.0.1:${apiPort}/openapi.json`, 60_000, api.exited);
  };
  const startWorker = async () => {
    worker = spawnService({ name: 'worker', command: process.execPath, args: ['worker/main.ts'], env, onLine: log('worker') });
    await waitForLine(worker, (line) => (line.includes('"worker started"') ? true : undefined), 60_000, history);
  };
  const kill = async (p: ManagedProcess | null) => {
    if (!p) return;
    p.child.kill('SIGKILL');
    await p.exited;
  };
  await Promise.all([startApi(), startWorker(), startPsp()]);

  const postmasterPid = () => Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const postgresProcesses = () => {
    const pid = postmasterPid();
    const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    return [pid, ...children];
  };

  return {
    holderUrl: `http://127.0.0.1:${port}`,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    pspUrl,
    env,
    recentWarnings: () => history.filter((line) => isWarning(line.slice(line.indexOf('] ') + 2))),
    async sql<T = any>(text: string, params: unknown[] = []) {
      return (await pool.query(text, params)).rows as T[];
    },
    temporalProxy: { cut: proxy.cut, restore: proxy.restore },
    startApi,
    killApi: async () => {
      await kill(api);
      api = null;
    },
    startWorker,
    startPsp,
    stopPsp: async () => {
      await psp?.stop();
      psp = null;
    },
    stopWorker: async () => {
      await worker?.stop();
      worker = null;
    },
    killWorker: async () => {
      await kill(worker);
      worker = null;
    },
    async restartTemporal() {
      await kill(temporal.process);
      temporal = await startTemporalDevServer(temporalOptions);
    },
    stopTemporal: () => kill(temporal.process),
    async startTemporal() {
      temporal = await startTemporalDevServer(temporalOptions);
    },
    pausePostgres: () => postgresProcesses().forEach((pid) => process.kill(pid, 'SIGSTOP')),
    resumePostgres: () => postgresProcesses().forEach((pid) => process.kill(pid, 'SIGCONT')),
    async stop() {
      await Promise.all([api?.stop(), worker?.stop(), psp?.stop()]);
      await proxy.close();
      await temporal.process.stop();
      await pool.end();
      await postgres.stop();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}
