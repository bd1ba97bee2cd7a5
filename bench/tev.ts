/**
 * TEV throughput and latency against a running platform (`npm start`), beside its baselines in the same run.
 *
 *   node bench/tev.ts [--seconds 10] [--pairs 50] [--clients 1,8,32] [--limits [--limit-rounds 2]]
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
 *
 * With `--limits`: a second tenant like the first, whose persons have transaction limits (`limits:set`, values no
 * transfer reaches), and after step 3 the largest client count's HTTP run alternately on the tenant without limits and
 * on the one with them, `--limit-rounds` times each: the cost of checking and counting every transfer's limits.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { openDatabase } from '../src/database.ts';
import { settleTev, type Settlement } from '../src/transfers/settlement.ts';
import { SettlementQueue } from '../src/transfers/settlement-queue.ts';
import type { TevSubmission } from '../workflows/contracts/tev.ts';
import { tevIdFor } from '../src/transfers/service.ts';
import { closeHttp } from './lib/http.ts';
import { checkConservation } from './lib/conservation.ts';
import { admin, apiUrl, assertPlatformUp, config, openPool, say } from './lib/platform.ts';
import { measureTemporalFloor } from './floor/floor.ts';
import { rawPosting } from './lib/pgbench.ts';
import { abbaOrder, since } from './lib/stats.ts';
import { printSummary, type Figure } from './lib/summary.ts';
import {
  amountCents,
  errorsOf,
  HOT_SHARE,
  httpClient,
  pickTransfer,
  printLoad,
  record,
  runLoad,
  setUpTev,
  type LoadResult,
  type TevSetup,
  type Transfer,
} from './lib/tev-load.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    pairs: { type: 'string', default: '50' },
    clients: { type: 'string', default: '1,8,32' },
    limits: { type: 'boolean', default: false },
    'limit-rounds': { type: 'string', default: '2' },
  },
});
const LIMIT_ROUNDS = Number(args['limit-rounds']);
const SECONDS = Number(args.seconds);
const PAIRS = Number(args.pairs);
const CLIENT_COUNTS = args.clients.split(',').map(Number);
const MOST_CLIENTS = Math.max(...CLIENT_COUNTS);

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

async function directClient(settle: Settle, s: TevSetup, deadline: number, r: LoadResult) {
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

// ------------------------------------------------------------------------------------------------------- limits

/** Above anything a run sends, so that no transfer is refused: the limits are checked and counted, never reached. */
const UNREACHED_LIMIT_CENTS = '100000000000';

/**
 * The same HTTP load on a tenant without limits and on one whose every account has them, alternately and in ABBA order
 * (`abbaOrder`), so that both see the same machine, its drift and the same growth of the tables; each round's rate and latencies, then the means and their ratio.
 */
async function compareLimits(pool: pg.Pool, without: TevSetup, figures: Figure[]): Promise<boolean> {
  say(`\nlimits: a second tenant whose persons have TEV and Pix limits (limits:set, ${UNREACHED_LIMIT_CENTS} cents each)`);
  const limited = await setUpTev(pool, PAIRS);
  for (const channel of ['TEV', 'PIX']) {
    const values = ['per-transaction', 'day', 'night', 'month'].flatMap((limit) => [`--${limit}-cents`, UNREACHED_LIMIT_CENTS]);
    await admin('limits:set', '--tenant', limited.tenantId, '--holder-type', 'PERSON', '--channel', channel, ...values);
  }
  const rates: Record<'without' | 'with', number[]> = { without: [], with: [] };
  for (let round = 1; round <= LIMIT_ROUNDS; round++) {
    for (const [which, setup] of abbaOrder(round, ['without', without] as const, ['with', limited] as const)) {
      const r = await runLoad(`HTTP POST /v1/tev, ${which} limits (round ${round})`, MOST_CLIENTS, SECONDS, (deadline, res) => httpClient(setup, HOT_SHARE, deadline, res));
      const rate = printLoad(r, 200, 'done');
      rates[which].push(rate);
      figures.push({ what: `HTTP, ${MOST_CLIENTS} clients, ${which} limits, round ${round}`, rate, latencies: r.all, errors: errorsOf(r, 200) });
    }
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  say(`\nlimits: ${mean(rates.with).toFixed(1)} TEV/s with, ${mean(rates.without).toFixed(1)} without: ${((mean(rates.with) / mean(rates.without) - 1) * 100).toFixed(1)}%`);
  say('conservation of the tenant with limits:');
  return checkConservation(pool, limited.tenantId);
}

// ------------------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  say(`bench/tev.ts: ${SECONDS} s a phase, ${PAIRS} pairs, clients ${CLIENT_COUNTS.join('/')}; ${os.cpus().length} CPUs; ${apiUrl}`);
  await assertPlatformUp();
  const pool = openPool();
  const figures: Figure[] = [];
  try {
    const setup = await setUpTev(pool, PAIRS);
    let pass = true;

    for (const clients of CLIENT_COUNTS) {
      const r = await runLoad('HTTP POST /v1/tev', clients, SECONDS, (deadline, res) => httpClient(setup, HOT_SHARE, deadline, res));
      const rate = printLoad(r, 200, 'done');
      const target = clients === 32 ? '>= 1,000/s, p99 <= 50 ms, 0 errors' : clients === 1 ? 'p50 <= 5 ms' : undefined;
      figures.push({ what: `HTTP, ${clients} client${clients > 1 ? 's' : ''} (20% hot account)`, rate, latencies: r.all, errors: errorsOf(r, 200), target });
    }
    const hot = await runLoad('HTTP POST /v1/tev, the hot account alone', MOST_CLIENTS, SECONDS, (deadline, res) => httpClient(setup, 1, deadline, res));
    figures.push({ what: `HTTP, hot account alone, ${MOST_CLIENTS} clients`, rate: printLoad(hot, 200, 'done'), latencies: hot.all, errors: errorsOf(hot, 200), target: '>= 400/s, no deadlock' });
    say('\nconservation after the HTTP runs:');
    pass = (await checkConservation(pool, setup.tenantId)) && pass;
    if (args.limits) pass = (await compareLimits(pool, setup, figures)) && pass;

    // The api's pool size: the direct run gets the same number of database connections as the HTTP handlers.
    const orm = await openDatabase(config.DATABASE_URL, config.DATABASE_POOL_MAX);
    try {
      const alone: Settle = (submission) => settleTev(orm.em.fork(), config, submission, 'SUBMIT');
      const single = await runLoad(`settleTev directly, one statement a transfer (pool ${config.DATABASE_POOL_MAX}, no HTTP)`, MOST_CLIENTS, SECONDS, (deadline, r) => directClient(alone, setup, deadline, r));
      figures.push({ what: `settleTev alone, ${MOST_CLIENTS} loops`, rate: printLoad(single, 200, 'DONE'), latencies: single.all, errors: errorsOf(single, 200) });
      const queue = new SettlementQueue(orm.em, config);
      const queued = await runLoad(
        `settlement queue directly (${config.TEV_BATCH_LANES} lanes, batches of up to ${config.TEV_BATCH_MAX}, no HTTP)`,
        MOST_CLIENTS,
        SECONDS,
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
