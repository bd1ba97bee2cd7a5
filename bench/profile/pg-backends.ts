/**
 * The CPU PostgreSQL's processes spend for each part of the platform while a load runs: each backend's CPU from
 * `/proc` over a window, told apart by its `application_name` (`banking-api`, `banking-worker`, …) and by the statement
 * it was seen running most often (`pg_stat_activity`, sampled every 100 ms), with the WAL written meanwhile.
 *
 *   node bench/profile/pg-backends.ts [--seconds 10] [--count "select count(*) from tev_transfer"]
 *
 * With `--count`, the query's difference over the window divides each line: the CPU per operation (milliseconds a
 * TEV, say), a figure the machine's drift moves less than a rate. Reads the platform's database as the benches do
 * (DATABASE_URL, else the embedded server); the server must run on this machine.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { openPool } from '../lib/platform.ts';
import { clockTicksPerSecond, processes, statFields } from '../lib/proc.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, count: { type: 'string' } } });
const SECONDS = Number(values.seconds);

/** User and system CPU ticks of a process so far; null once it has exited. */
function cpuTicks(pid: number): number | null {
  try {
    return statFields(pid).ticks;
  } catch {
    return null;
  }
}

const postgresProcesses = () => processes().filter((p) => p.command.startsWith('postgres:'));

const pool = openPool();
const count = async () => (values.count ? Number((await pool.query<{ n: string }>(`select (${values.count})::bigint as n`)).rows[0]!.n) : 0);
const { rows: [walStart] } = await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
const countStart = await count();
const ticksStart = new Map(postgresProcesses().map(({ pid }) => [pid, cpuTicks(pid) ?? 0]));
/** What each backend was seen doing, and how often. */
const seen = new Map<number, Map<string, number>>();
const until = Date.now() + SECONDS * 1000;
while (Date.now() < until) {
  const { rows } = await pool.query<{ pid: number; what: string }>(
    `select pid, backend_type || ' | ' || coalesce(nullif(application_name, ''), '-') || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as what
       from pg_stat_activity where pid <> pg_backend_pid()`,
  );
  for (const { pid, what } of rows) {
    const tally = seen.get(pid) ?? new Map<string, number>();
    tally.set(what, (tally.get(what) ?? 0) + 1);
    seen.set(pid, tally);
  }
  await sleep(100);
}
const operations = (await count()) - countStart;
const { rows: [wal] } = await pool.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text as bytes', [walStart!.lsn]);
await pool.end();

const byPart = new Map<string, number>();
let total = 0;
for (const { pid, command } of postgresProcesses()) {
  const ticks = cpuTicks(pid);
  if (ticks === null) continue;
  const spent = ticks - (ticksStart.get(pid) ?? 0);
  total += spent;
  const mostSeen = [...(seen.get(pid) ?? [])].sort((a, b) => b[1] - a[1])[0]?.[0];
  const part = mostSeen ?? command.slice(0, 50);
  byPart.set(part, (byPart.get(part) ?? 0) + spent);
}
const ms = (ticks: number) => (1000 * ticks) / clockTicksPerSecond;
const perOperation = (ticks: number) => (operations > 0 ? `  ${(ms(ticks) / operations).toFixed(3)} ms an operation` : '');
console.log(`PostgreSQL's CPU over ${SECONDS} s${values.count ? `, ${operations} operations` : ''}, by backend (type | application | statement seen most):`);
for (const [part, ticks] of [...byPart].sort((a, b) => b[1] - a[1]).filter(([, ticks]) => ticks > 0)) {
  console.log(`${((100 * ms(ticks)) / (SECONDS * 1000)).toFixed(1).padStart(6)}% of a core${perOperation(ticks)}  ${part}`);
}
console.log(`${((100 * ms(total)) / (SECONDS * 1000)).toFixed(1).padStart(6)}% of a core in all${perOperation(total)}; WAL ${Number(wal!.bytes).toLocaleString('en')} bytes${operations > 0 ? `, ${Math.round(Number(wal!.bytes) / operations)} an operation` : ''}`);
