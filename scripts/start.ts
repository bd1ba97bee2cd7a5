/**
 * `npm start`: the whole platform on one machine. Starts (or reuses) the embedded PostgreSQL, builds and starts the
 * Temporal dev server with its UI, applies migrations, then runs the sandbox PSP (with SANDBOX on), the api and the
 * worker, restarting any of them that crashes. Ctrl-C (or SIGTERM) stops everything in reverse order; data stays in ./data for the next start.
 * Set DATABASE_URL to use another PostgreSQL, TEMPORAL_ADDRESS to use another Temporal server.
 */
import { dirname } from 'node:path';
import { EMBEDDED_DATABASE, loadConfigOrExit } from '../src/config.ts';
import { openDatabase } from '../src/database.ts';
import { migrate } from '../src/persistence/orm.ts';
import { backgroundCpuGroup, backgroundNice, spawnService, type BackgroundPriority, waitForHttp, waitForLine } from './lib/processes.ts';
import { createSupervisor, stopOnSignals } from './lib/supervisor.ts';
import { ensureTemporalBinary } from './lib/temporal-binary.ts';
import { startTemporalDevServer } from './lib/temporal-server.ts';

const say = (line: string) => process.stdout.write(`[start] ${line}\n`);
const node = process.execPath;
const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX: process.env.SANDBOX ?? '1' };
const externalDatabase = Boolean(process.env.DATABASE_URL);
const externalTemporal = Boolean(process.env.TEMPORAL_ADDRESS);

const config = loadConfigOrExit(env);
const background: BackgroundPriority = { nice: backgroundNice(env), cpuGroup: backgroundCpuGroup(env) };

const supervisor = createSupervisor(say);
const stopAll = stopOnSignals(supervisor, say);

try {
  const temporalBinary = externalTemporal ? null : ensureTemporalBinary(say);

  if (!externalDatabase) {
    await supervisor.keep({
      name: 'postgres',
      async start() {
        const history: string[] = [];
        const pg = spawnService({
          name: 'postgres',
          command: node,
          args: ['scripts/postgres-server.ts', '--data-dir', './data/pg', '--port', String(EMBEDDED_DATABASE.port), '--database', EMBEDDED_DATABASE.database],
          onLine: (line) => history.push(line),
        });
        const { url } = await waitForLine(pg, (line) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }) : undefined), 120_000, history);
        env.DATABASE_URL = url;
        return pg;
      },
    });
    say(`PostgreSQL (embedded, data in ./data/pg): ${env.DATABASE_URL!.replace(/:[^:@/]+@/, ':***@')}`);
  } else {
    say('PostgreSQL: DATABASE_URL');
  }

  if (temporalBinary) {
    const options = {
      binary: temporalBinary,
      port: Number(config.TEMPORAL_ADDRESS.split(':')[1]),
      uiPort: 8233,
      dbFile: './data/temporal.db',
      namespace: config.TEMPORAL_NAMESPACE,
      priority: background,
    };
    await supervisor.keep({ name: 'temporal', start: async () => (await startTemporalDevServer(options)).process });
    say(`Temporal dev server: ${config.TEMPORAL_ADDRESS} (history in ./data/temporal.db), UI: http://127.0.0.1:8233`);
  } else {
    say(`Temporal: ${config.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS)`);
  }

  const orm = await openDatabase(env.DATABASE_URL!, 2);
  const applied = await migrate(orm, env.DATABASE_URL!);
  await orm.close();
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema up to date');

  // The api allocates short-lived objects for every request: a larger young generation (V8's default is 16 MB a
  // semi-space) collects them less often and promotes fewer, which shortened the TEV tail under load (bench/README.md).
  // The Dockerfile's CMD passes the same flag.
  const sandbox = env.SANDBOX === '1' || env.SANDBOX === 'true';
  const pspUrl = new URL(config.PIX_PROVIDER_URL);
  if (sandbox) {
    // The Pix provider the platform talks to over HTTP; it notifies the integration API of what happened.
    env.SANDBOX_PSP_PORT ??= pspUrl.port || '3002';
    env.SANDBOX_PSP_NOTIFY_URL ??= `http://${config.HOST}:${config.API_PORT}/v1/pix/provider/notifications`;
    await supervisor.keep({ name: 'sandbox-psp', start: async () => spawnService({ name: 'sandbox-psp', command: node, args: ['src/sandbox/psp/main.ts'], env, inheritOutput: true }) });
    await waitForHttp(`http://${config.HOST}:${env.SANDBOX_PSP_PORT}/health`, 60_000);
  }
  // The worker runs behind the requests (BACKGROUND_NICE and BACKGROUND_IDLE), the api at the default priority.
  const services = [
    ['worker', ['worker/main.ts'], background],
    ['api', ['--max-semi-space-size=32', 'src/main.ts'], {}],
  ] as const;
  for (const [name, args, priority] of services) {
    await supervisor.keep({ name, start: async () => spawnService({ name, command: node, args: [...args], env, inheritOutput: true, ...priority }) });
  }
  const holderUrl = `http://${config.HOST}:${config.PORT}`;
  const integrationUrl = `http://${config.HOST}:${config.API_PORT}`;
  await waitForHttp(`${holderUrl}/health`, 120_000);
  await waitForHttp(`${integrationUrl}/health`, 30_000);

  say('platform ready:');
  say(`  holder API       ${holderUrl}   (docs ${holderUrl}/docs)`);
  say(`  integration API  ${integrationUrl}   (docs ${integrationUrl}/docs)`);
  if (temporalBinary) say('  Temporal UI      http://127.0.0.1:8233');
  if (sandbox) say(`  sandbox PSP      http://${config.HOST}:${env.SANDBOX_PSP_PORT}   (notifies ${env.SANDBOX_PSP_NOTIFY_URL})`);
  else say(`  Pix provider     ${config.PIX_PROVIDER_URL}`);
  say(`  worker           task queue "${config.TEMPORAL_TASK_QUEUE}"${sandbox ? ', sandbox on' : ''}`);
  const behind = [
    background.nice ? `nice ${background.nice} (BACKGROUND_NICE, 0 turns it off)` : null,
    background.cpuGroup ? `in the idle cpu cgroup ${dirname(background.cpuGroup)} (BACKGROUND_IDLE, 0 turns it off)` : null,
  ].filter(Boolean);
  if (behind.length) say(`The worker${temporalBinary ? ' and the Temporal server run' : ' runs'} behind the requests: ${behind.join(', ')}.`);
  say('A service that crashes is restarted (backoff 1 s to 30 s). Ctrl-C stops everything.');
} catch (err) {
  process.stderr.write(`[start] ${err instanceof Error ? err.message : String(err)}\n`);
  await stopAll(1);
}
