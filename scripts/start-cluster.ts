/**
 * `npm run start:cluster`: the production topology on one machine, without Docker (docker-compose.yml describes the
 * same one): the embedded PostgreSQL (or DATABASE_URL), the real Temporal server on it (all four services in one
 * process, history and advanced visibility in PostgreSQL) with its UI, two workers, two apis and HAProxy in front of
 * them on the ports `npm start` uses, and the sandbox PSP (SANDBOX on unless set). The first start builds the Temporal
 * server, its schema tool and its UI with Go, and installs HAProxy. Each process is restarted if it dies; Ctrl-C (or
 * SIGTERM) stops them all, last started first; data stays in ./data.
 */
import { EMBEDDED_DATABASE, loadConfigOrExit } from '../src/config.ts';
import { ensureClusterBinaries } from './lib/cluster-binaries.ts';
import { API_INSTANCES, apiInstancePorts, CLUSTER_PORTS } from './lib/cluster-topology.ts';
import { startCluster } from './lib/cluster.ts';
import { createSupervisor, stopOnSignals } from './lib/supervisor.ts';
import { temporalPortsFrom } from './lib/temporal-cluster-server.ts';

const say = (line: string) => process.stdout.write(`[cluster] ${line}\n`);
const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX: process.env.SANDBOX ?? '1' };

const config = loadConfigOrExit(env);

const supervisor = createSupervisor(say);
const stopAll = stopOnSignals(supervisor, say);

try {
  const binaries = ensureClusterBinaries(say);
  const external = Boolean(process.env.DATABASE_URL);
  const cluster = await startCluster({
    binaries,
    supervisor,
    dataDir: 'data',
    embedded: external ? null : { dir: './data/pg', port: EMBEDDED_DATABASE.port, database: EMBEDDED_DATABASE.database, fresh: false },
    host: config.HOST,
    ports: { holder: config.PORT, integration: config.API_PORT, psp: Number(new URL(config.PIX_PROVIDER_URL).port || CLUSTER_PORTS.psp) },
    apiPorts: Array.from({ length: API_INSTANCES }, (_, i) => apiInstancePorts(CLUSTER_PORTS.apiBase, i)),
    temporalPorts: temporalPortsFrom(Number(config.TEMPORAL_ADDRESS.split(':')[1]), CLUSTER_PORTS.temporalUi),
    env: { ...env, TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE, JWT_SECRET: config.JWT_SECRET, KEY_PEPPER: config.KEY_PEPPER, PIX_PROVIDER_API_KEY: config.PIX_PROVIDER_API_KEY, PIX_PROVIDER_WEBHOOK_SECRET: config.PIX_PROVIDER_WEBHOOK_SECRET },
    output: 'inherit',
    log: say,
  });
  say('cluster ready:');
  say(`  holder API       ${cluster.holderUrl}   (HAProxy → ${cluster.apis.map((a) => `${a.name} ${a.holderUrl}`).join(', ')})`);
  say(`  integration API  ${cluster.apiUrl}   (HAProxy → ${cluster.apis.map((a) => `${a.name} ${a.apiUrl}`).join(', ')})`);
  say(`  Temporal server  ${cluster.temporalAddress}   (PostgreSQL: databases temporal and temporal_visibility)`);
  say(`  Temporal UI      ${cluster.uiUrl}`);
  say(`  workers          ${cluster.workers.join(', ')} on task queue "${cluster.env.TEMPORAL_TASK_QUEUE}"`);
  if (env.SANDBOX === '1' || env.SANDBOX === 'true') say(`  sandbox PSP      ${cluster.pspUrl}`);
  say('`npm run check:cluster` checks that every part answers. Ctrl-C stops everything.');
} catch (err) {
  process.stderr.write(`[cluster] ${err instanceof Error ? err.message : String(err)}\n`);
  await stopAll(1);
}
