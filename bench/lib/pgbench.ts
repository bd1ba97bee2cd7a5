import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './platform.ts';
import { Latencies } from './stats.ts';

const run = promisify(execFile);

export interface PgbenchResult {
  tps: number;
  latencies: Latencies;
}

/** libpq's environment for a postgres:// URL, so psql and pgbench reach the platform's own server. */
function libpqEnv(databaseUrl: string): NodeJS.ProcessEnv {
  const u = new URL(databaseUrl);
  return {
    ...process.env,
    // A socket directory is percent-encoded as the host (embeddedDatabaseUrl); PGHOST takes it as a path.
    PGHOST: decodeURIComponent(u.hostname),
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: u.pathname.slice(1),
  };
}

/**
 * The raw double-entry baseline (`bench/sql/raw-posting.sql`) with pgbench on the platform's own server: tables of its
 * own, `accounts` accounts, `clients` connections for `seconds`. Latencies come from pgbench's per-transaction log.
 */
export async function rawPosting(databaseUrl: string, accounts: number, clients: number, seconds: number): Promise<PgbenchResult> {
  const env = libpqEnv(databaseUrl);
  const sql = (file: string) => join(repoRoot, 'bench', 'sql', file);
  await run('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-v', `accounts=${accounts}`, '-f', sql('raw-posting-setup.sql')], { env });
  const logs = mkdtempSync(join(tmpdir(), 'pgbench-'));
  try {
    const { stdout } = await run(
      'pgbench',
      ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-D', `accounts=${accounts}`, '-f', sql('raw-posting.sql'), '-l', `--log-prefix=${join(logs, 'tx')}`],
      { env, maxBuffer: 16 << 20 },
    );
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
    const latencies = new Latencies();
    // Each log line: client, transaction, latency in microseconds, script, epoch seconds, microseconds.
    for (const file of readdirSync(logs)) {
      for (const line of readFileSync(join(logs, file), 'utf8').split('\n')) {
        const micros = Number(line.split(' ')[2]);
        if (line && Number.isFinite(micros)) latencies.add(micros / 1000);
      }
    }
    return { tps, latencies };
  } finally {
    rmSync(logs, { recursive: true, force: true });
    await run('psql', ['-q', '-c', 'drop table if exists bench_raw_entry, bench_raw_transfer, bench_raw_account'], { env }).catch(() => undefined);
  }
}
