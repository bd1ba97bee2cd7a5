import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { spawnService, type BackgroundPriority, type ManagedProcess } from './processes.ts';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  process: ManagedProcess;
}

export interface TemporalDevServerOptions {
  binary: string;
  port: number;
  /** null: no UI (tests). */
  uiPort: number | null;
  /** null: in memory (tests); a path keeps workflow history across restarts. */
  dbFile: string | null;
  namespace: string;
  /** The server's place behind the request path (`SpawnOptions.nice`, `cpuGroup`); absent in tests. */
  priority?: BackgroundPriority;
  log?: (line: string) => void;
}

/**
 * The Go collector's settings for the dev server, unless the environment sets them: it collects when its heap has grown
 * by 400% instead of 100%, soft-capped at 1 GiB. Its collector took 8.5% of its CPU while payouts drained and 2.4%
 * with these (perf, `bench/README.md`), for about 570 MB resident after a drain.
 */
function goMemoryDefaults(): NodeJS.ProcessEnv {
  return { GOGC: process.env.GOGC ?? '400', GOMEMLIMIT: process.env.GOMEMLIMIT ?? '1GiB' };
}

/** Runs `temporal server start-dev` and resolves once its frontend answers. */
export async function startTemporalDevServer(o: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(o.port), '--namespace', o.namespace, '--log-level', 'warn'];
  if (o.uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(o.uiPort));
  if (o.dbFile) {
    mkdirSync(dirname(o.dbFile), { recursive: true });
    // WAL with synchronous=normal: history survives process crashes and restarts, and the dev server stops
    // serialising every workflow task on an fsync (the bottleneck under load).
    args.push('--db-filename', o.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  const output: string[] = [];
  const server = spawnService({
    name: 'temporal',
    command: o.binary,
    args,
    env: { ...process.env, ...goMemoryDefaults() },
    ...o.priority,
    onLine: (line) => {
      output.push(line);
      if (output.length > 200) output.shift();
      o.log?.(line);
    },
  });

  const address = `127.0.0.1:${o.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const early = await Promise.race([server.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 250))]);
    if (early !== 'running') throw new Error(`temporal server exited (${early}) before it was ready:\n${output.join('\n')}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.describeNamespace({ namespace: o.namespace });
      await connection.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await server.stop(1000);
        throw new Error(`temporal server did not become ready on ${address}: ${String(err)}`);
      }
    }
  }
  return {
    address,
    uiUrl: o.uiPort === null ? null : `http://127.0.0.1:${o.uiPort}`,
    process: server,
  };
}
