/**
 * TEV throughput and latency against a running platform (`npm start`), beside its baselines in the same run.
 *
 *   node bench/tev.ts [--seconds 10] [--pairs 50] [--clients 1,8,32]
 *
 * 1. Setup: a new tenant, `pairs` holder pairs and one hot source account through HTTP registration and sandbox KYC,
 *    every source funded by sandbox incoming Pix, one integration API key per source.
 * 2. HTTP: POST /v1/tev from 1, 8 and 32 client loops, `seconds` each; 80% from a random pair's source to its
 *    destination, 20% from the hot account to a random destination (they all queue on that account's row lock).
 * 3. The hot account alone: every transfer from it, 32 clients.
 * 4. The settlement called directly, no HTTP, 32 loops: `settleTev` (one statement per transfer), then the
 *    settlement queue the handlers call (`settle_tev_batch` under load).
 * 5. Raw SQL: the same double-entry posting in pgbench (`bench/sql/raw-posting.sql`) on the same server.
 * 6. The Temporal floor: empty Update-with-Start workflows per second on the same Temporal server.
 * 7. Conservation of the bench tenant's ledger (exit 1 on FAIL), then the figures beside their targets and ratios.
 */
import { randomInt, randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { openOrm } from '../src/persistence/orm.ts';
import { settleTev, type Settlement } from '../src/transfers/settlement.ts';
import { SettlementQueue } from '../src/transfers/settlement-queue.ts';
import type { TevSubmission } from '../workflows/contracts/tev.ts';
import { tevIdFor } from '../src/transfers/service.ts';
import { closeHttp, request } from './lib/http.ts';
import {
  admin,
  apiUrl,
  assertPlatformUp,
  config,
  fund,
  mapLimit,
  onboardHolder,
  openPool,
  say,
  waitForApprovedAccounts,
  type BenchAccount,
} from './lib/platform.ts';
import { measureTemporalFloor } from './floor/floor.ts';
import { rawPosting } from './lib/pgbench.ts';
import { Latencies, seconds, since } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    pairs: { type: 'string', default: '50' },
    clients: { type: 'string', default: '1,8,32' },
  },
});
const SECONDS = Number(args.seconds);
const PAIRS = Number(args.pairs);
const CLIENT_COUNTS = args.clients.split(',').map(Number);
const MOST_CLIENTS = Math.max(...CLIENT_COUNTS);
const HOT_SHARE = 0.2;

// Funding far above what a run can spend (amounts are 1..1000 cents), so no transfer is refused for balance:
// a 422 in the results means something else went wrong.
const SOURCE_FUNDING_CENTS = 100_000_000n; // R$ 1,000,000.00
const HOT_FUNDING_CENTS = 1_000_000_000n; // R$ 10,000,000.00

/** Registrations hash a password with argon2 on the api's thread pool (4 threads): more in flight only queues. */
const REGISTRATION_PARALLELISM = 8;
/**
 * API keys: one `node src/admin/cli.ts api-key:create` process per key, as an operator would, run in parallel
 * batches of 4. Each process spends ~1 s of CPU loading Node, the ORM and the Temporal client before one insert, so
 * on 2 cores more than 4 at once buys nothing.
 */
const KEY_PARALLELISM = 4;

interface Source extends BenchAccount {
  apiKey: string;
}

interface Setup {
  tenantId: string;
  pairs: { source: Source; destination: BenchAccount }[];
  hot: Source;
  destinations: BenchAccount[];
}

interface Transfer {
  source: Source;
  destination: BenchAccount;
  hot: boolean;
}

/** The mix: 80% a random pair, 20% the hot account to a random destination (`hotShare` 1: the hot account alone). */
function pickTransfer(s: Setup, hotShare = HOT_SHARE): Transfer {
  if (Math.random() < hotShare) {
    return { source: s.hot, destination: s.destinations[randomInt(s.destinations.length)]!, hot: true };
  }
  const pair = s.pairs[randomInt(s.pairs.length)]!;
  return { ...pair, hot: false };
}

/** 1 to 1000 cents, never ending in ,97 or ,98: the sandbox answers those `submitted_unknown` on purpose. */
const amountCents = () => {
  const cents = randomInt(1, 1001);
  return cents % 100 === 97 || cents % 100 === 98 ? cents - 2 : cents;
};

// ---------------------------------------------------------------------------------------------------------- setup

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  say(`  ${label.padEnd(48)} ${seconds(since(start))}`);
  return result;
}

async function setUp(pool: pg.Pool): Promise<Setup> {
  say(`setup: 1 tenant, ${PAIRS} pairs + 1 hot account (${2 * PAIRS + 1} holders)`);
  const start = performance.now();
  const { tenantId } = await timed('tenant:create (operator CLI)', () => admin('tenant:create', '--name', `bench-tev ${new Date().toISOString()}`));

  const count = 2 * PAIRS + 1;
  const holders = await timed(`registration + sandbox KYC (${count}, ${REGISTRATION_PARALLELISM} at once)`, () =>
    mapLimit(Array.from({ length: count }), REGISTRATION_PARALLELISM, (_, i) => onboardHolder(tenantId, `Titular Bench ${i}`)),
  );
  const byHolder = await waitForApprovedAccounts(pool, tenantId, count);
  // In registration order: holder 2i is pair i's source, 2i + 1 its destination, the last one the hot account.
  const accounts = holders.map((h) => byHolder.get(h.holderId)!);
  const sources = [...accounts.filter((_, i) => i % 2 === 0 && i < 2 * PAIRS), accounts[2 * PAIRS]!];

  const funding = (a: BenchAccount) => (a === sources.at(-1) ? HOT_FUNDING_CENTS : SOURCE_FUNDING_CENTS);
  await timed(`funding ${sources.length} sources (sandbox incoming Pix)`, async () => {
    // The tenant's first Pix creates its SETTLEMENT and FEE_REVENUE accounts, and the api caches their ids before
    // that transaction commits: first Pix arriving in parallel fail with 500 "account … was not locked". So one
    // first, alone, then the rest in parallel.
    await fund(tenantId, sources[0]!.id, funding(sources[0]!));
    await mapLimit(sources.slice(1), 4, (a) => fund(tenantId, a.id, funding(a)));
  });
  const keyed = await timed(`api-key:create (${sources.length} processes, ${KEY_PARALLELISM} at once)`, () =>
    mapLimit(sources, KEY_PARALLELISM, async (a): Promise<Source> => {
      const { key } = await admin('api-key:create', '--tenant', tenantId, '--pix-account', a.pixAccountId);
      return { ...a, apiKey: key };
    }),
  );
  say(`  setup total ${seconds(since(start))} (tenant ${tenantId})`);

  const destinations = accounts.filter((_, i) => i % 2 === 1);
  return { tenantId, pairs: destinations.map((destination, i) => ({ source: keyed[i]!, destination })), hot: keyed[PAIRS]!, destinations };
}

// ----------------------------------------------------------------------------------------------------- HTTP load

interface LoadResult {
  elapsedMs: number;
  all: Latencies;
  hot: Latencies;
  pairs: Latencies;
  byStatus: Map<number, number>;
  rejections: Map<string, number>;
  samples: Map<number, unknown>;
}

function newResult(): LoadResult {
  return { elapsedMs: 0, all: new Latencies(), hot: new Latencies(), pairs: new Latencies(), byStatus: new Map(), rejections: new Map(), samples: new Map() };
}

function record(r: LoadResult, hot: boolean, status: number, ms: number, detail?: string, body?: unknown) {
  r.all.add(ms);
  (hot ? r.hot : r.pairs).add(ms);
  r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
  if (detail) r.rejections.set(detail, (r.rejections.get(detail) ?? 0) + 1);
  if (status !== 200 && !r.samples.has(status)) r.samples.set(status, body);
}

/** One client: a request at a time, back to back, until the deadline. Status 0 is a network error. */
async function httpClient(s: Setup, hotShare: number, deadline: number, r: LoadResult) {
  while (performance.now() < deadline) {
    const t = pickTransfer(s, hotShare);
    const start = performance.now();
    try {
      const res = await request('POST', `${apiUrl}/v1/tev`, {
        body: { destinationBranch: t.destination.agency, destinationAccount: t.destination.number, amountCents: String(amountCents()) },
        headers: { authorization: `Bearer ${t.source.apiKey}`, 'idempotency-key': randomUUID() },
      });
      record(r, t.hot, res.status, since(start), res.status === 422 ? String(res.body?.reason) : undefined, res.body);
    } catch (err) {
      record(r, t.hot, 0, since(start), undefined, String(err));
    }
  }
}

async function runLoad(name: string, clients: number, client: (deadline: number, r: LoadResult) => Promise<void>): Promise<LoadResult> {
  say(`\n${name}: ${clients} client loops for ${SECONDS} s (load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  const r = newResult();
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  await Promise.all(Array.from({ length: clients }, () => client(deadline, r)));
  r.elapsedMs = since(start);
  return r;
}

function printLoad(r: LoadResult, okStatus: number, okName: string): number {
  const ok = r.byStatus.get(okStatus) ?? 0;
  const rate = ok / (r.elapsedMs / 1000);
  say(`  requests        ${r.all.count} in ${seconds(r.elapsedMs)}`);
  say(`  settled TEV/s   ${rate.toFixed(1)} (${ok} ${okName})`);
  say(`  rejected (422)  ${r.byStatus.get(422) ?? 0}${r.rejections.size ? ` ${JSON.stringify(Object.fromEntries(r.rejections))}` : ''}`);
  const others = [...r.byStatus].filter(([s]) => s !== okStatus && s !== 422);
  say(`  other results   ${others.length ? others.map(([s, n]) => `${s === 0 ? 'network error' : s}: ${n}`).join(', ') : 'none'}`);
  for (const [status, body] of r.samples) if (status !== 422) say(`    e.g. ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  say(`  ${r.all.line('latency, all')}`);
  say(`  ${r.pairs.line('latency, random pairs')}`);
  say(`  ${r.hot.line('latency, hot account')}`);
  return rate;
}

// ------------------------------------------------------------------------------------------------ direct baseline

type Settle = (s: TevSubmission) => Promise<Settlement>;

/** One transfer settled by `settle`, with no HTTP in front of it. */
async function directTev(settle: Settle, tenantId: string, t: Transfer): Promise<'DONE' | 'FAILED'> {
  const idempotencyKey = randomUUID();
  const settled = await settle({
    tevId: tevIdFor(config.KEY_PEPPER, t.source.id, idempotencyKey),
    tenantId,
    sourceAccountId: t.source.id,
    destination: { accountId: t.destination.id },
    amountCents: String(amountCents()),
    description: null,
    externalRef: null,
    endToEndId: randomUUID(),
    idempotencyKey,
    origin: 'INTEGRATION_API',
  });
  if (settled.code !== 'DONE' && settled.code !== 'FAILED') throw new Error(settled.code);
  return settled.code;
}

async function directClient(settle: Settle, s: Setup, deadline: number, r: LoadResult) {
  while (performance.now() < deadline) {
    const t = pickTransfer(s);
    const start = performance.now();
    try {
      const status = await directTev(settle, s.tenantId, t);
      // Recorded with the HTTP status the same outcome would get, so both runs print alike.
      record(r, t.hot, status === 'DONE' ? 200 : 422, since(start), status === 'FAILED' ? 'FAILED' : undefined);
    } catch (err) {
      record(r, t.hot, 500, since(start), undefined, err instanceof Error ? err.message : String(err));
    }
  }
}

// ---------------------------------------------------------------------------------------------- conservation

/**
 * The ledger's invariants for the bench tenant, read in one repeatable-read snapshot so that transfers settling in
 * the meantime (a late `submitted_unknown`) cannot make a consistent ledger look broken.
 */
async function checkConservation(pool: pg.Pool, tenantId: string): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const q = async (sql: string) => (await client.query(sql, [tenantId])).rows[0] as Record<string, string>;
    const checks: [string, boolean, string][] = [];

    const mismatched = await q(`
      select count(*)::int as n from (
        select a.id from account a left join ledger_entry e on e.account_id = a.id
         where a.tenant_id = $1
         group by a.id having a.balance_cents <> coalesce(sum(e.amount_cents), 0)) x`);
    checks.push(['every balance = sum of its ledger entries', Number(mismatched.n) === 0, `${mismatched.n} accounts differ`]);

    const total = await q(`select coalesce(sum(balance_cents), 0)::text as total, count(*)::int as n from account where tenant_id = $1`);
    checks.push(['sum of all balances of the tenant = 0', total.total === '0', `sum ${total.total} over ${total.n} accounts`]);

    const negative = await q(`select count(*)::int as n from account where tenant_id = $1 and kind <> 'SETTLEMENT' and balance_cents < 0`);
    checks.push(['no negative balance outside SETTLEMENT', Number(negative.n) === 0, `${negative.n} negative`]);

    const ops = await q(`
      select (select count(*) from tev_transfer where tenant_id = $1 and status = 'DONE')::int as done,
             (select count(*) from movement where tenant_id = $1 and source = 'TEF_OUT')::int as outs,
             (select count(*) from movement where tenant_id = $1 and source = 'TEF_IN')::int as ins,
             (select count(*) from tev_transfer where tenant_id = $1 and status = 'PROCESSING')::int as processing`);
    checks.push(['each DONE transfer has one debit and one credit', ops.done === ops.outs && ops.done === ops.ins, `${ops.done} DONE, ${ops.outs} TEF_OUT, ${ops.ins} TEF_IN movements`]);
    await client.query('commit');

    for (const [what, ok, detail] of checks) say(`  ${ok ? 'ok  ' : 'FAIL'} ${what} (${detail})`);
    // Over HTTP a PROCESSING transfer is a 502 submitted_unknown that its workflow settles later; in the direct run it
    // is a posting that failed (deadlock victim) after its row was inserted, which nothing will ever settle.
    if (Number(ops.processing) > 0) say(`  note: ${ops.processing} transfers PROCESSING (HTTP: submitted_unknown; direct: failed postings)`);
    const pass = checks.every(([, ok]) => ok);
    say(`  conservation: ${pass ? 'PASS' : 'FAIL'}`);
    return pass;
  } finally {
    client.release();
  }
}

// ------------------------------------------------------------------------------------------------------- main

interface Figure {
  what: string;
  rate: number;
  latencies: Latencies;
  errors: number;
  target?: string;
}

function printSummary(figures: Figure[], ratios: [string, number, string?][]) {
  say('\nsummary (one run, same machine, same servers):');
  say(`  ${'what'.padEnd(46)} ${'/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}  target`);
  for (const f of figures) {
    const { p50, p99 } = f.latencies.summary();
    say(`  ${f.what.padEnd(46)} ${f.rate.toFixed(1).padStart(8)} ${p50.toFixed(1).padStart(8)} ${p99.toFixed(1).padStart(8)} ${String(f.errors).padStart(7)}  ${f.target ?? ''}`);
  }
  for (const [what, value, target] of ratios) say(`  ${what.padEnd(46)} ${value.toFixed(2).padStart(8)}  ${target ?? ''}`);
}

/** Everything that was not the expected answer: other statuses, network errors. */
const errorsOf = (r: LoadResult, okStatus: number) => [...r.byStatus].filter(([s]) => s !== okStatus && s !== 422).reduce((n, [, c]) => n + c, 0);

async function main(): Promise<number> {
  say(`bench/tev.ts: ${SECONDS} s a phase, ${PAIRS} pairs, clients ${CLIENT_COUNTS.join('/')}; ${os.cpus().length} CPUs; ${apiUrl}`);
  await assertPlatformUp();
  const pool = openPool();
  const figures: Figure[] = [];
  try {
    const setup = await setUp(pool);
    let pass = true;

    for (const clients of CLIENT_COUNTS) {
      const r = await runLoad('HTTP POST /v1/tev', clients, (deadline, res) => httpClient(setup, HOT_SHARE, deadline, res));
      const rate = printLoad(r, 200, 'done');
      const target = clients === 32 ? '>= 1,000/s, p99 <= 50 ms, 0 errors' : clients === 1 ? 'p50 <= 5 ms' : undefined;
      figures.push({ what: `HTTP, ${clients} client${clients > 1 ? 's' : ''} (20% hot account)`, rate, latencies: r.all, errors: errorsOf(r, 200), target });
    }
    const hot = await runLoad('HTTP POST /v1/tev, the hot account alone', MOST_CLIENTS, (deadline, res) => httpClient(setup, 1, deadline, res));
    figures.push({ what: `HTTP, hot account alone, ${MOST_CLIENTS} clients`, rate: printLoad(hot, 200, 'done'), latencies: hot.all, errors: errorsOf(hot, 200), target: '>= 400/s, no deadlock' });
    say('\nconservation after the HTTP runs:');
    pass = (await checkConservation(pool, setup.tenantId)) && pass;

    // The api's pool size: the direct run gets the same number of database connections as the HTTP handlers.
    const orm = await openOrm(config.DATABASE_URL, config.DATABASE_POOL_MAX);
    try {
      const alone: Settle = (submission) => settleTev(orm.em.fork(), config, submission, 'SUBMIT');
      const single = await runLoad(`settleTev directly, one statement a transfer (pool ${config.DATABASE_POOL_MAX}, no HTTP)`, MOST_CLIENTS, (deadline, r) => directClient(alone, setup, deadline, r));
      figures.push({ what: `settleTev alone, ${MOST_CLIENTS} loops`, rate: printLoad(single, 200, 'DONE'), latencies: single.all, errors: errorsOf(single, 200) });
      const queue = new SettlementQueue(orm.em, config);
      const queued = await runLoad(
        `settlement queue directly (${config.TEV_BATCH_LANES} lanes, batches of up to ${config.TEV_BATCH_MAX}, no HTTP)`,
        MOST_CLIENTS,
        (deadline, r) => directClient((submission) => queue.settle(submission), setup, deadline, r),
      );
      figures.push({ what: `settlement queue, ${MOST_CLIENTS} loops`, rate: printLoad(queued, 200, 'DONE'), latencies: queued.all, errors: errorsOf(queued, 200) });
    } finally {
      await orm.close();
    }
    say('\nconservation after the direct runs:');
    pass = (await checkConservation(pool, setup.tenantId)) && pass;

    say(`\nraw SQL posting (pgbench, bench/sql/raw-posting.sql): ${MOST_CLIENTS} clients for ${SECONDS} s on the same server`);
    const raw = await rawPosting(config.DATABASE_URL, 2 * PAIRS + 1, MOST_CLIENTS, SECONDS);
    say(`  ${raw.tps.toFixed(1)} postings/s; ${raw.latencies.line('latency')}`);
    figures.push({ what: `raw SQL posting (pgbench), ${MOST_CLIENTS} clients`, rate: raw.tps, latencies: raw.latencies, errors: 0 });

    say(`\nTemporal floor: empty Update-with-Start workflows, ${MOST_CLIENTS} clients for ${SECONDS} s on ${config.TEMPORAL_ADDRESS}`);
    const floor = await measureTemporalFloor(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, MOST_CLIENTS, SECONDS);
    const floorRate = floor.completed / (floor.elapsedMs / 1000);
    say(`  ${floorRate.toFixed(1)} workflows/s; ${floor.latencies.line('latency')}; errors ${floor.errors}`);
    figures.push({ what: `Temporal floor (empty workflow), ${MOST_CLIENTS} clients`, rate: floorRate, latencies: floor.latencies, errors: floor.errors });

    const http32 = figures.find((f) => f.what.startsWith(`HTTP, ${MOST_CLIENTS} clients`))!.rate;
    const queued = figures.find((f) => f.what.startsWith('settlement queue'))!.rate;
    const alone = figures.find((f) => f.what.startsWith('settleTev alone'))!.rate;
    printSummary(figures, [
      ['HTTP / raw SQL', http32 / raw.tps, '>= 0.35'],
      ['HTTP / settlement queue directly', http32 / queued],
      ['settlement queue / settleTev alone', queued / alone],
      ['HTTP / Temporal floor', http32 / floorRate],
    ]);
    say(`\nresult: ${pass ? 'PASS' : 'FAIL'} (conservation)`);
    return pass ? 0 : 1;
  } finally {
    await pool.end();
    closeHttp();
  }
}

process.exitCode = await main();
