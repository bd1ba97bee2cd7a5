/**
 * Where a run's work went: CPU per kind of process (from /proc) and commits per database (pg_stat_database) of the
 * embedded PostgreSQL (./data/pg, 127.0.0.1:5433). The first call writes a snapshot to FILE; the second prints the
 * difference since then. Run it before and after a bench on a platform of `npm start` or `npm run start:cluster`:
 *   node bench/cluster/snapshot.ts /tmp/snap.json && node bench/pix.ts … && node bench/cluster/snapshot.ts /tmp/snap.json
 * A process that ended between the two (the bench itself) is not counted.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { EMBEDDED_DATABASE } from '../../src/config.ts';

interface Snapshot {
  at: number;
  cpuTicks: Record<string, number>;
  commits: Record<string, number>;
  walBytes: number;
}

const file = process.argv[2];
if (!file) throw new Error('usage: node bench/cluster/snapshot.ts FILE');
const postmaster = Number(readFileSync('data/pg/postmaster.pid', 'utf8').split('\n')[0]);

function kindOf(pid: number, ppid: number, command: string): string | null {
  if (pid === postmaster || ppid === postmaster) return 'PostgreSQL';
  if (command.includes('/temporal-server-v')) return 'Temporal server';
  if (command.includes(' server start-dev ')) return 'Temporal dev server';
  if (command.includes('worker/main.ts')) return 'workers';
  if (command.includes('src/main.ts')) return 'apis';
  if (command.includes('haproxy -f')) return 'HAProxy';
  if (command.includes('psp/main.ts')) return 'sandbox PSP';
  return null;
}

/** User and system CPU ticks of every process of the platform, added up by kind. */
function cpuTicks(): Record<string, number> {
  const ticks: Record<string, number> = {};
  for (const name of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const kind = kindOf(Number(name), Number(fields[1]), command);
      if (kind) ticks[kind] = (ticks[kind] ?? 0) + Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended while it was read
    }
  }
  return ticks;
}

const client = new pg.Client({ host: '127.0.0.1', port: EMBEDDED_DATABASE.port, user: EMBEDDED_DATABASE.user, password: EMBEDDED_DATABASE.password, database: 'postgres' });
await client.connect();
const { rows } = await client.query<{ datname: string; commits: string }>(
  `select datname, xact_commit as commits from pg_stat_database where datname in ('banking', 'temporal', 'temporal_visibility')`,
);
const [wal] = (await client.query<{ wal_bytes: string }>('select wal_bytes from pg_stat_wal')).rows;
await client.end();
const now: Snapshot = { at: Date.now(), cpuTicks: cpuTicks(), commits: Object.fromEntries(rows.map((r) => [r.datname, Number(r.commits)])), walBytes: Number(wal!.wal_bytes) };

if (!existsSync(file)) {
  writeFileSync(file, JSON.stringify(now));
} else {
  const before = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const seconds = (now.at - before.at) / 1000;
  process.stdout.write(`over ${seconds.toFixed(0)} s:\n`);
  for (const [kind, ticks] of Object.entries(now.cpuTicks)) {
    process.stdout.write(`  CPU ${kind.padEnd(20)} ${((ticks - (before.cpuTicks[kind] ?? 0)) / seconds).toFixed(1)}% of a core\n`);
  }
  for (const [database, commits] of Object.entries(now.commits)) process.stdout.write(`  commits ${database.padEnd(20)} ${commits - (before.commits[database] ?? 0)}\n`);
  process.stdout.write(`  WAL written ${((now.walBytes - before.walBytes) / 1e6).toFixed(1)} MB\n`);
}
