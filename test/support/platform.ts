import { randomUUID } from 'node:crypto';
import { spawnService, waitForHttp, waitForLine, type ManagedProcess } from '../../scripts/lib/processes.ts';
import { freePort } from './ports.ts';

export interface Platform {
  holderUrl: string;
  apiUrl: string;
  /** The sandbox PSP of this platform (its API and controls), reached with `env.PIX_PROVIDER_API_KEY`. */
  pspUrl: string;
  /** The environment the api and worker run with (tests pass it to the operator CLI too). */
  env: NodeJS.ProcessEnv;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  /** SIGKILL: the worker dies wherever it is, activities in flight included. */
  killWorker(): Promise<void>;
  startPsp(): Promise<void>;
  stopPsp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The secrets every test process shares, set explicitly: several platforms (and the operator CLI) meet in one database,
 * and tests sign tokens of their own. A platform started without them generates its own into ./data.
 */
export const TEST_JWT_SECRET = 'test-only-jwt-secret-of-the-test-platform';
export const TEST_KEY_PEPPER = 'test-only-key-pepper-of-the-test-platform';
/** What the platform and its sandbox PSP share: the PSP's API credential and the secret of its notifications. */
export const TEST_PIX_PROVIDER_API_KEY = 'test-only-pix-provider-api-key-of-the-test-platform';
export const TEST_PIX_PROVIDER_WEBHOOK_SECRET = `whsec_${Buffer.from('test-only-pix-provider-webhook-secret').toString('base64')}`;

/** Environment pointing at the run's PostgreSQL and Temporal, with a task queue of its own. */
export function testEnv(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: process.env.TEST_DATABASE_URL,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE,
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    DATABASE_POOL_MAX: '10',
    SANDBOX: '1',
    JWT_SECRET: TEST_JWT_SECRET,
    KEY_PEPPER: TEST_KEY_PEPPER,
    PIX_PROVIDER_API_KEY: TEST_PIX_PROVIDER_API_KEY,
    PIX_PROVIDER_WEBHOOK_SECRET: TEST_PIX_PROVIDER_WEBHOOK_SECRET,
    // Test files share one database: only the file that tests webhook delivery relays the outbox, so no other
    // file's worker (another task queue, no test CA) picks up its events.
    OUTBOX_RELAY: '0',
    // Tests name their client address with X-Forwarded-For, so rate limits of one test do not reach another.
    TRUST_PROXY: 'loopback',
    // Readiness is read from the processes' info lines; they are printed only with TEST_DEBUG=1.
    LOG_LEVEL: 'info',
    ...overrides,
  };
}

function launch(name: string, script: string, env: NodeJS.ProcessEnv, history: string[]): ManagedProcess {
  return spawnService({
    name,
    command: process.execPath,
    args: [script],
    env,
    onLine: (line) => {
      history.push(`[${name}] ${line}`);
      if (history.length > 500) history.shift();
      if (process.env.TEST_DEBUG) process.stderr.write(`[${name}] ${line}\n`);
    },
  });
}

/** The environment of a platform's sandbox PSP on `pspPort`, notifying the integration API on `apiPort`. */
export const pspEnv = (pspPort: number, apiPort: number): NodeJS.ProcessEnv => ({
  PIX_PROVIDER_URL: `http://127.0.0.1:${pspPort}`,
  SANDBOX_PSP_PORT: String(pspPort),
  SANDBOX_PSP_NOTIFY_URL: `http://127.0.0.1:${apiPort}/v1/pix/provider/notifications`,
});

/**
 * Starts a real api process (both HTTP apps), a real worker process and the platform's own sandbox PSP process, on
 * their own ports and task queue; the PSP and the platform share the test's secrets.
 */
export async function startPlatform(overrides: NodeJS.ProcessEnv = {}): Promise<Platform> {
  const [port, apiPort, pspPort] = [await freePort(), await freePort(), await freePort()];
  const env = testEnv({ PORT: String(port), API_PORT: String(apiPort), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...pspEnv(pspPort, apiPort), ...overrides });
  const history: string[] = [];
  let worker: ManagedProcess | null = null;
  let psp: ManagedProcess | null = null;
  const pspUrl = `http://127.0.0.1:${pspPort}`;

  const startPsp = async () => {
    psp = launch('sandbox-psp', 'src/sandbox/psp/main.ts', env, history);
    await waitForHttp(`${pspUrl}/health`, 60_000, psp.exited);
  };
  const stopPsp = async () => {
    await psp?.stop();
    psp = null;
  };

  const startWorker = async () => {
    worker = launch('worker', 'worker/main.ts', env, history);
    await waitForLine(worker, (line) => (line.includes('"worker started"') ? true : undefined), 60_000, history);
  };
  const stopWorker = async () => {
    await worker?.stop();
    worker = null;
  };
  const killWorker = async () => {
    worker?.child.kill('SIGKILL');
    await worker?.exited;
    worker = null;
  };

  const api = launch('api', 'src/main.ts', env, history);
  try {
    await Promise.all([startWorker(), startPsp(), waitForHttp(`http://127.0.0.1:${port}/health`, 60_000, api.exited)]);
  } catch (error) {
    await Promise.all([api.stop(), stopWorker(), stopPsp()]);
    // The processes' last lines say why one of them did not come up; without them a failed start is a bare "exited".
    throw new Error(`${(error as Error).message}\n${history.slice(-40).join('\n')}`);
  }
  return {
    holderUrl: `http://127.0.0.1:${port}`,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    pspUrl,
    env,
    startWorker,
    stopWorker,
    killWorker,
    startPsp,
    stopPsp,
    async stop() {
      await Promise.all([api.stop(), stopWorker(), stopPsp()]);
    },
  };
}
