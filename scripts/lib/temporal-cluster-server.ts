import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { spawnService, type ManagedProcess } from './processes.ts';
import { TEMPORAL_DATABASES, TEMPORAL_HISTORY_SHARDS, TEMPORAL_SQL_PLUGIN } from './cluster-topology.ts';

/** Where Temporal reaches PostgreSQL: over TCP (its driver takes host:port). */
export interface TemporalSql {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The ports of the server's four services (gRPC and membership each), its frontend's HTTP API, and the UI's. */
export interface TemporalPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: [number, number, number, number];
  ui: number;
}

/** The layout of the server's own development config (config/development-postgres12.yaml), from the frontend's port. */
export const temporalPortsFrom = (frontend: number, ui: number): TemporalPorts => ({
  frontend,
  frontendHttp: frontend + 10,
  history: frontend + 1,
  matching: frontend + 2,
  worker: frontend + 6,
  membership: [frontend - 300, frontend - 299, frontend - 298, frontend - 294],
  ui,
});

/** Reads host, port and credentials from a postgres:// URL (TCP only: the server's driver takes no socket directory). */
export function temporalSqlFrom(databaseUrl: string): TemporalSql {
  const url = new URL(databaseUrl);
  const host = decodeURIComponent(url.hostname);
  if (host.startsWith('/')) throw new Error(`Temporal reaches PostgreSQL over TCP: give DATABASE_URL a host, not the socket directory ${host}`);
  return { host, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/**
 * Creates Temporal's two databases if missing and brings their schema to this server's version, with the schema tool
 * built from the same module (its schemas are embedded in it): what compose's `temporal-schema` service runs with
 * admin-tools. Safe to run at every start.
 */
export function setUpTemporalSchema(sqlTool: string, sql: TemporalSql, log: (line: string) => void): void {
  const tool = (database: string, ...args: string[]) =>
    execFileSync(sqlTool, ['--endpoint', sql.host, '--port', String(sql.port), '--user', sql.user, '--password', sql.password, '--plugin', TEMPORAL_SQL_PLUGIN, '--database', database, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  for (const [database, schema] of [[TEMPORAL_DATABASES.history, 'temporal'], [TEMPORAL_DATABASES.visibility, 'visibility']] as const) {
    try {
      tool(database, 'create-database');
    } catch (err) {
      // Already there: the schema steps below bring it up to date.
      if (!String((err as { stderr?: string }).stderr ?? err).includes('already exists')) throw err;
    }
    tool(database, 'setup-schema', '--version', '0.0');
    tool(database, 'update-schema', '--schema-name', `postgresql/v12/${schema}`);
    log(`Temporal database ${database}: schema up to date`);
  }
}

/**
 * The server's configuration: all four services in one process, history and advanced visibility (SQL, PostgreSQL
 * 12+) on PostgreSQL, the shard count compose uses, default dynamic config. JSON is YAML, which the server reads.
 */
export function temporalServerConfig(sql: TemporalSql, ports: TemporalPorts): object {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: TEMPORAL_SQL_PLUGIN,
      databaseName,
      connectAddr: `${sql.host}:${sql.port}`,
      connectProtocol: 'tcp',
      user: sql.user,
      password: sql.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: object = {}) => ({ rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra } });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: TEMPORAL_HISTORY_SHARDS,
      datastores: { default: store(TEMPORAL_DATABASES.history, 20), visibility: store(TEMPORAL_DATABASES.visibility, 10) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(ports.frontend, ports.membership[0], { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.membership[1]),
      matching: service(ports.matching, ports.membership[2]),
      worker: service(ports.worker, ports.membership[3]),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
  };
}

export interface TemporalClusterServerOptions {
  binary: string;
  dir: string;
  sql: TemporalSql;
  ports: TemporalPorts;
  namespace: string;
  log?: (line: string) => void;
}

/** Days a closed workflow's history is kept, as the CLI gives a namespace it creates. */
const RETENTION_SECONDS = 3 * 24 * 3600;

/**
 * Starts the server and resolves once its frontend answers for `namespace`, creating the namespace the first time
 * (what compose's `temporal-namespace` service does with the CLI).
 */
export async function startTemporalClusterServer(o: TemporalClusterServerOptions): Promise<ManagedProcess> {
  mkdirSync(o.dir, { recursive: true });
  const configFile = resolve(join(o.dir, 'temporal.yaml'));
  writeFileSync(configFile, `${JSON.stringify(temporalServerConfig(o.sql, o.ports), null, 2)}\n`, { mode: 0o600 });
  const output: string[] = [];
  const server = spawnService({
    name: 'temporal',
    command: o.binary,
    args: ['--config-file', configFile, '--allow-no-auth', 'start'],
    onLine: (line) => {
      output.push(line);
      if (output.length > 200) output.shift();
      o.log?.(line);
    },
  });
  const address = `127.0.0.1:${o.ports.frontend}`;
  const deadline = Date.now() + 120_000;
  let registered = false;
  for (;;) {
    const early = await Promise.race([server.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 500))]);
    if (early !== 'running') throw new Error(`temporal server exited (${early}) before it was ready:\n${output.join('\n')}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: o.namespace });
        // The namespace's own reads answer only once the frontend's namespace cache holds it.
        await connection.workflowService.listWorkflowExecutions({ namespace: o.namespace, pageSize: 1 });
        break;
      } catch (err) {
        if ((err as { code?: number }).code === 5 && !registered) {
          await connection.workflowService.registerNamespace({ namespace: o.namespace, workflowExecutionRetentionPeriod: { seconds: RETENTION_SECONDS } as never });
          registered = true;
        } else {
          throw err;
        }
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) {
        await server.stop(1000);
        throw new Error(`temporal server did not become ready on ${address}: ${String(err)}\n${output.slice(-20).join('\n')}`);
      }
    }
  }
  return server;
}

/** The UI server, pointed at the frontend, on 127.0.0.1 only: it has no authentication and can terminate workflows. */
export function startTemporalUi(binary: string, dir: string, ports: TemporalPorts, namespace: string, log?: (line: string) => void): ManagedProcess {
  const configDir = join(dir, 'ui');
  mkdirSync(configDir, { recursive: true });
  const config = { temporalGrpcAddress: `127.0.0.1:${ports.frontend}`, host: '127.0.0.1', port: ports.ui, enableUi: true, defaultNamespace: namespace, hideLogs: true, cors: { allowOrigins: [`http://127.0.0.1:${ports.ui}`] } };
  writeFileSync(join(configDir, 'cluster.yaml'), `${JSON.stringify(config, null, 2)}\n`);
  return spawnService({ name: 'temporal-ui', command: binary, args: ['--root', dir, '--config', 'ui', '--env', 'cluster', 'start'], onLine: (line) => log?.(line) });
}
