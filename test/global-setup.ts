import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureClusterBinaries } from '../scripts/lib/cluster-binaries.ts';
import { spawnService, waitForLine, type ManagedProcess } from '../scripts/lib/processes.ts';
import { ensureTemporalBinary } from '../scripts/lib/temporal-binary.ts';
import { startTemporalDevServer } from '../scripts/lib/temporal-server.ts';
import { freePort } from './support/ports.ts';

/**
 * One PostgreSQL (embedded, fresh; or TEST_DATABASE_URL) and one Temporal dev server (in memory) for the whole run,
 * migrated and with the workflow bundle built once. Test files start their own api and worker processes against them.
 * With TEST_UPGRADED_DATABASE=1 the database is an upgraded one instead: the latest baseline of the previous version
 * (test/upgrade/baselines/) restored, then migrated as an operator's upgrade migrates it. Its rows stay as they are,
 * the payout hand-off it left included: that one waits on the task queue of the run that made the baseline, which no
 * test worker serves (upgrade.test.ts settles it), and what the flow suites count is their own tenants' rows, or how
 * a count changes.
 */
export default async function globalSetup(): Promise<void> {
  try {
    await setUp();
  } catch (err) {
    // Jest runs no teardown after a failed setup: stop what was started.
    const { default: teardown } = await import('./global-teardown.ts');
    await teardown();
    throw err;
  }
}

async function setUp(): Promise<void> {
  const services: ManagedProcess[] = [];
  // Each run owns its directory, so two runs on one machine never share (or wipe) a database.
  const runDir = join('data', `test-run-${process.pid}`);
  mkdirSync(runDir, { recursive: true });
  Object.assign(globalThis, { __services: services, __runDir: runDir });
  const node = process.execPath;
  const log = (line: string) => process.env.TEST_DEBUG && process.stderr.write(`${line}\n`);

  const temporalBinary = ensureTemporalBinary((line) => process.stderr.write(`${line}\n`));
  // The cluster fault suite's binaries (the real Temporal server, its UI, HAProxy), built or installed before it starts:
  // a first build takes minutes, longer than a suite's setup may.
  if (process.env.CLUSTER_FAULTS === '1') ensureClusterBinaries((line) => process.stderr.write(`${line}\n`));

  let databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl) {
    const history: string[] = [];
    const pg = spawnService({
      name: 'postgres',
      command: node,
      args: ['scripts/postgres-server.ts', '--data-dir', join(runDir, 'pg'), '--port', String(await freePort()), '--database', 'banking_test', '--fresh'],
      onLine: (line) => {
        history.push(line);
        log(line);
      },
    });
    services.push(pg);
    ({ url: databaseUrl } = await waitForLine(pg, (l) => (l.startsWith('{"url"') ? (JSON.parse(l) as { url: string }) : undefined), 120_000, history));
  }

  const temporal = await startTemporalDevServer({
    binary: temporalBinary,
    port: await freePort(),
    uiPort: null,
    dbFile: null,
    namespace: 'default',
    log,
  });
  services.push(temporal.process);

  if (process.env.TEST_UPGRADED_DATABASE === '1') {
    // Imported only here: the restore loads the ORM and the entities, which a plain run does not need.
    const { baselineDirs, restoreBaseline } = await import('./upgrade/baseline.ts');
    await restoreBaseline(databaseUrl, baselineDirs().at(-1)!);
  }
  const env = { ...process.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, LOG_LEVEL: 'warn' };
  execFileSync(node, ['scripts/migrate.ts'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const bundle = join(runDir, 'workflow-bundle.js');
  execFileSync(node, ['scripts/bundle-workflows.ts', bundle], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(node, ['scripts/register-search-attributes.ts'], { env, stdio: ['ignore', 'ignore', 'inherit'] });

  // Inherited by the test workers, which jest forks after global setup.
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_TEMPORAL_ADDRESS = temporal.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundle;
}
