/**
 * `npm run check:cluster`: checks that every part of a running `npm run start:cluster` answers (scripts/lib/cluster-check.ts),
 * with the same environment as the cluster (HOST, PORT, API_PORT, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_TASK_QUEUE). Prints one line per check and exits 1 if one fails.
 */
import { loadConfigOrExit } from '../src/config.ts';
import { checkCluster } from './lib/cluster-check.ts';
import { CLUSTER_PORTS } from './lib/cluster-topology.ts';

const config = loadConfigOrExit();
const checks = await checkCluster({
  holderUrl: `http://${config.HOST}:${config.PORT}`,
  apiUrl: `http://${config.HOST}:${config.API_PORT}`,
  temporalAddress: config.TEMPORAL_ADDRESS,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  uiUrl: process.env.TEMPORAL_UI_URL ?? `http://127.0.0.1:${CLUSTER_PORTS.temporalUi}`,
});
for (const c of checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
const failed = checks.filter((c) => !c.ok).length;
process.stdout.write(`${checks.length - failed} passed, ${failed} failed\n`);
process.exit(failed ? 1 : 0);
