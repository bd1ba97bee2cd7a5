/**
 * `npm start`: the whole platform on one machine. Starts (or reuses) the embedded PostgreSQL, builds and starts the
 * Temporal dev server with its UI, applies migrations, then runs the api and the worker. Ctrl-C (or SIGTERM) stops
 * everything in reverse order; data stays in ./data for the next start.
 * Set DATABASE_URL to use another PostgreSQL, TEMPORAL_ADDRESS to use another Temporal server.
 */
import { loadConfig, ConfigError, EMBEDDED_DATABASE } from '../src/config.ts';
import { openOrm, migrate } from '../src/persistence/orm.ts';
import { spawnService, waitForHttp, waitForLine, type ManagedProcess } from './lib/processes.ts';
import { ensureTemporalBinary } from './lib/temporal-binary.ts';
import { startTemporalDevServer } from './lib/temporal-server.ts';

const say = (line: string) => process.stdout.write(`[start] ${line}\n`);
const node = process.execPath;
const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX: process.env.SANDBOX ?? '1' };
const externalDatabase = Boolean(process.env.DATABASE_URL);
const externalTemporal = Boolean(process.env.TEMPORAL_ADDRESS);

let config;
try {
  config = loadConfig(env);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  }
  throw err;
}

const running: ManagedProcess[] = [];
let stopping: Promise<never> | undefined;

/** Stops services in reverse start order (api and worker before Temporal, PostgreSQL last), once. */
function stopAll(code: number): Promise<never> {
  stopping ??= (async () => {
    say('stopping...');
    for (const p of [...running].reverse()) {
      await p.stop();
      say(`${p.name} stopped`);
    }
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

function supervise(p: ManagedProcess) {
  running.push(p);
  void p.exited.then((code) => {
    if (stopping) return;
    say(`${p.name} exited unexpectedly (${code}); stopping the platform`);
    void stopAll(1);
  });
}

const prefixed = (name: string) => (line: string) => process.stdout.write(`[${name}] ${line}\n`);

try {
  const temporalBinary = externalTemporal ? null : ensureTemporalBinary(say);

  if (!externalDatabase) {
    const history: string[] = [];
    const pg = spawnService({
      name: 'postgres',
      command: node,
      args: ['scripts/postgres-server.ts', '--data-dir', './data/pg', '--port', String(EMBEDDED_DATABASE.port), '--database', EMBEDDED_DATABASE.database],
      onLine: (line) => history.push(line),
    });
    supervise(pg);
    const { url } = await waitForLine(pg, (line) => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }) : undefined), 120_000, history);
    env.DATABASE_URL = url;
    say(`PostgreSQL (embedded, data in ./data/pg): ${url.replace(/:[^:@/]+@/, ':***@')}`);
  } else {
    say('PostgreSQL: DATABASE_URL');
  }

  if (temporalBinary) {
    const temporal = await startTemporalDevServer({
      binary: temporalBinary,
      port: Number(config.TEMPORAL_ADDRESS.split(':')[1]),
      uiPort: 8233,
      dbFile: './data/temporal.db',
      namespace: config.TEMPORAL_NAMESPACE,
    });
    supervise(temporal.process);
    say(`Temporal dev server: ${temporal.address} (history in ./data/temporal.db), UI: ${temporal.uiUrl}`);
  } else {
    say(`Temporal: ${config.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS)`);
  }

  const orm = await openOrm(env.DATABASE_URL!, 2);
  const applied = await migrate(orm, env.DATABASE_URL!);
  await orm.close();
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema up to date');

  const worker = spawnService({ name: 'worker', command: node, args: ['worker/main.ts'], env, onLine: prefixed('worker') });
  supervise(worker);
  const api = spawnService({ name: 'api', command: node, args: ['src/main.ts'], env, onLine: prefixed('api') });
  supervise(api);
  const holderUrl = `http://${config.HOST}:${config.PORT}`;
  const integrationUrl = `http://${config.HOST}:${config.API_PORT}`;
  await waitForHttp(`${holderUrl}/health`, 120_000, api.exited);
  await waitForHttp(`${integrationUrl}/health`, 30_000, api.exited);

  say('platform ready:');
  say(`  holder API       ${holderUrl}   (docs ${holderUrl}/docs)`);
  say(`  integration API  ${integrationUrl}   (docs ${integrationUrl}/docs)`);
  if (temporalBinary) say('  Temporal UI      http://127.0.0.1:8233');
  say(`  worker           task queue "${config.TEMPORAL_TASK_QUEUE}"${env.SANDBOX === '1' ? ', sandbox on' : ''}`);
  say('Ctrl-C stops everything.');
} catch (err) {
  process.stderr.write(`[start] ${err instanceof Error ? err.message : String(err)}\n`);
  await stopAll(1);
}
