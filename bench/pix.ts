/**
 * Pix payments against a running platform (`npm start`, sandbox on), beside TEV and the Temporal floor in the same run.
 *
 *   node bench/pix.ts [--seconds 15] [--clients 1,8,32] [--payers 16] [--tev-pairs 50] [--steady-rate 25]
 *                     [--steady-seconds 60] [--idle-seconds 60] [--cpu-seconds 30] [--drain-timeout 600]
 *                     [--limits [--limit-rounds 2]]
 *
 * 1. Setup: the TEV tenant of `bench/tev.ts` (`tev-pairs` pairs and a hot account, one API key per source), and a
 *    PIN-exempt Pix tenant with `payers` holders, each funded by sandbox incoming Pix and given a client token
 *    (tenant key, `POST /authenticate/clients`), so that no payment pays the PIN's argon2 check.
 * 2. TEV: `POST /v1/tev` at the largest client count, for the ratio Pix/TEV; then the Temporal floor. Both run before
 *    any Pix, so that payout workflows still running do not slow them.
 * 3. Pix: `POST {base_url}/pix/payment` by key, R$ 0.01 to a random EVP key, from each client count in turn (client i
 *    pays from payer i mod `payers`), `seconds` each; 201 PROCESSING and 202 PENDING counted apart, anything else an
 *    error. After each phase, the drain: the time from its end until every payout of the tenant is final, and its
 *    payouts POSTED per second from the phase's start to the last one's (end to end).
 * 4. Steady: `steady-rate` payments a second for `steady-seconds` (open loop), and each payout's delay from its
 *    `created_at` (the commit of the request's transaction) to being seen POSTED (polled every 100 ms).
 * 5. Idle: `idle-seconds` after the last payout is final, the payout workflows still running (Temporal visibility)
 *    and the CPU of the Temporal server and the worker over `cpu-seconds`, from /proc.
 * 6. Conservation of both tenants' ledgers (exit 1 on FAIL), then the figures beside the targets of issue 23.
 *
 * With `--limits`, between 3 and 4: a second Pix tenant like the first whose persons have Pix limits (`limits:set`,
 * values no payment reaches), and the largest client count's phase run alternately on the tenant without limits and on
 * the one with them, `--limit-rounds` times each, each drained before the next: the cost of checking and counting
 * every payment's limits (issue 25).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { pixPayoutWorkflow } from '../workflows/pix-payout.ts';
import { measureTemporalFloor } from './floor/floor.ts';
import { checkConservation, LEDGER_CHECKS, PIX_PAYOUT_CHECK } from './lib/conservation.ts';
import { closeHttp, request } from './lib/http.ts';
import { setUpPixPayers, type PixPayer } from './lib/pix-load.ts';
import * as platformLib from './lib/platform.ts';
import { admin, assertPlatformUp, config, holderUrl, openPool, say } from './lib/platform.ts';
import { cpuBetween, cpuOver, cpuSnapshot, describeCpu, processes, type Proc } from './lib/proc.ts';
import { abbaOrder, Latencies, seconds, since } from './lib/stats.ts';
import { printSummary, type Figure } from './lib/summary.ts';
import { errorsOf, HOT_SHARE, httpClient, loadAverage, printLoad, runLoad, setUpTev } from './lib/tev-load.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    clients: { type: 'string', default: '1,8,32' },
    payers: { type: 'string', default: '16' },
    'tev-pairs': { type: 'string', default: '50' },
    'steady-rate': { type: 'string', default: '25' },
    'steady-seconds': { type: 'string', default: '60' },
    'idle-seconds': { type: 'string', default: '60' },
    'cpu-seconds': { type: 'string', default: '30' },
    'drain-timeout': { type: 'string', default: '600' },
    limits: { type: 'boolean', default: false },
    'limit-rounds': { type: 'string', default: '2' },
  },
});
const SECONDS = Number(args.seconds);
const CLIENT_COUNTS = args.clients.split(',').map(Number);
const MOST_CLIENTS = Math.max(...CLIENT_COUNTS);
const PAYERS = Number(args.payers);
const TEV_PAIRS = Number(args['tev-pairs']);
const STEADY_RATE = Number(args['steady-rate']);
const STEADY_SECONDS = Number(args['steady-seconds']);
const IDLE_SECONDS = Number(args['idle-seconds']);
const CPU_SECONDS = Number(args['cpu-seconds']);
const DRAIN_TIMEOUT_MS = Number(args['drain-timeout']) * 1000;
const LIMIT_ROUNDS = Number(args['limit-rounds']);

/** Far above what a run spends (1 cent and the fee a payment), so a 422 is a defect, not a drained account. */
const PAYER_FUNDING_CENTS = 100_000_000n; // R$ 1,000,000.00
const AMOUNT_REAIS = 0.01;
/** How often the steady phase reads which of its payouts are final: the resolution of its delays. */
const STEADY_POLL_MS = 100;
const DRAIN_POLL_MS = 250;
const OPEN_STATES = ['REQUESTED', 'PROCESSING'];
const RUNNING_PAYOUTS_QUERY = `WorkflowType = "${pixPayoutWorkflow.name}" AND ExecutionStatus = "Running"`;

// ---------------------------------------------------------------------------------------------------------- setup

interface Payer extends PixPayer {
  tenantId: string;
}

interface PixSetup {
  tenantId: string;
  payers: Payer[];
}

async function setUpPix(pool: pg.Pool): Promise<PixSetup> {
  say(`setup: 1 PIN-exempt tenant, ${PAYERS} payers`);
  const start = performance.now();
  const { tenantId, payers } = await setUpPixPayers(platformLib, pool, `bench-pix ${new Date().toISOString()}`, PAYERS, PAYER_FUNDING_CENTS);
  say(`  setup total ${seconds(since(start))} (tenant ${tenantId})`);
  return { tenantId, payers: payers.map((p) => ({ ...p, tenantId })) };
}

// ------------------------------------------------------------------------------------------------------ payments

interface PixTally {
  elapsedMs: number;
  all: Latencies;
  byStatus: Map<number, number>;
  /** The first answer of each status other than 201 and 202. */
  samples: Map<number, unknown>;
  /** The payouts the answers named (201 and 202), in answer order. */
  payoutIds: string[];
}

const newTally = (): PixTally => ({ elapsedMs: 0, all: new Latencies(), byStatus: new Map(), samples: new Map(), payoutIds: [] });
const accepted = (t: PixTally) => (t.byStatus.get(201) ?? 0) + (t.byStatus.get(202) ?? 0);
const pixErrors = (t: PixTally) => t.all.count - accepted(t);

/** One payment of R$ 0.01 to a random EVP key, recorded in `t`. Status 0 is a network error. */
async function pay(payer: Payer, t: PixTally): Promise<void> {
  const start = performance.now();
  let status = 0;
  let body: any;
  try {
    ({ status, body } = await request('POST', `${holderUrl}/pix/payment`, {
      body: { accountId: payer.accountId, pixKey: randomUUID(), pixKeyType: 'EVP', amount: AMOUNT_REAIS },
      headers: { 'x-tenant-id': payer.tenantId, authorization: `Bearer ${payer.token}`, 'idempotency-key': randomUUID() },
    }));
  } catch (err) {
    body = String(err);
  }
  t.all.add(since(start));
  t.byStatus.set(status, (t.byStatus.get(status) ?? 0) + 1);
  if ((status === 201 || status === 202) && body?.payout?.payoutId) t.payoutIds.push(body.payout.payoutId);
  else if (!t.samples.has(status)) t.samples.set(status, body);
}

/** `clients` loops, each paying back to back from its own payer until the phase ends. */
async function closedLoop(payers: Payer[], clients: number): Promise<PixTally> {
  const t = newTally();
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (performance.now() < deadline) await pay(payers[i % payers.length]!, t);
    }),
  );
  t.elapsedMs = since(start);
  return t;
}

function printPix(t: PixTally): number {
  const rate = accepted(t) / (t.elapsedMs / 1000);
  say(`  requests          ${t.all.count} in ${seconds(t.elapsedMs)}`);
  say(`  accepted Pix/s    ${rate.toFixed(1)} (${t.byStatus.get(201) ?? 0} × 201 PROCESSING, ${t.byStatus.get(202) ?? 0} × 202 PENDING)`);
  const others = [...t.byStatus].filter(([s]) => s !== 201 && s !== 202);
  say(`  errors            ${others.length ? others.map(([s, n]) => `${s === 0 ? 'network error' : s}: ${n}`).join(', ') : 'none'}`);
  for (const [status, body] of t.samples) say(`    e.g. ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  say(`  ${t.all.line('latency, all')}`);
  return rate;
}

// -------------------------------------------------------------------------------------------------------- limits

/** Above anything a run sends, so that no payment is refused: the limits are checked and counted, never reached. */
const UNREACHED_LIMIT_CENTS = '100000000000';

/**
 * The same Pix burst on a tenant without limits and on one whose persons have them, alternately in ABBA order
 * (`abbaOrder`), each drained before the next so that no backlog of one slows the other; each round's rate and
 * latencies, then the means and their ratio.
 */
async function compareLimits(pool: pg.Pool, without: PixSetup, figures: Figure[]): Promise<boolean> {
  say(`\nlimits: a second Pix tenant whose persons have Pix limits (limits:set, ${UNREACHED_LIMIT_CENTS} cents each)`);
  const limited = await setUpPix(pool);
  const values = ['per-transaction', 'day', 'night', 'month'].flatMap((limit) => [`--${limit}-cents`, UNREACHED_LIMIT_CENTS]);
  await admin('limits:set', '--tenant', limited.tenantId, '--holder-type', 'PERSON', '--channel', 'PIX', ...values);
  const runs: Record<'without' | 'with', PixTally[]> = { without: [], with: [] };
  for (let round = 1; round <= LIMIT_ROUNDS; round++) {
    for (const [which, setup] of abbaOrder(round, ['without', without] as const, ['with', limited] as const)) {
      say(`\nHTTP POST /pix/payment, ${MOST_CLIENTS} clients, ${which} limits (round ${round}; load average before: ${loadAverage()})`);
      const phaseStart = new Date();
      const tally = await closedLoop(setup.payers, MOST_CLIENTS);
      const phaseEnd = Date.now();
      const rate = printPix(tally);
      await drain(pool, setup.tenantId, phaseStart, phaseEnd);
      runs[which].push(tally);
      figures.push({ what: `Pix accepted, ${MOST_CLIENTS} clients, ${which} limits, round ${round}`, rate, latencies: tally.all, errors: pixErrors(tally) });
    }
  }
  const meanRate = (tallies: PixTally[]) => tallies.reduce((sum, t) => sum + accepted(t) / (t.elapsedMs / 1000), 0) / tallies.length;
  const meanP99 = (tallies: PixTally[]) => tallies.reduce((sum, t) => sum + t.all.summary().p99, 0) / tallies.length;
  const [withRate, withoutRate] = [meanRate(runs.with), meanRate(runs.without)];
  say(`\nlimits: ${withRate.toFixed(1)} Pix/s with, ${withoutRate.toFixed(1)} without: ${((withRate / withoutRate - 1) * 100).toFixed(1)}%; mean p99 ${meanP99(runs.with).toFixed(1)} ms with, ${meanP99(runs.without).toFixed(1)} ms without`);
  // Proof that the limits were checked and counted, not skipped: every payer has a month's usage.
  const { rows } = await pool.query<{ counted: number }>(
    `select count(*)::int as counted from account_limit_usage u join account a on a.id = u.account_id
      where a.tenant_id = $1 and u.channel = 'PIX' and u.month_used_cents > 0`,
    [limited.tenantId],
  );
  say(`  payers whose Pix payments were counted against their limits: ${rows[0]!.counted} of ${limited.payers.length}`);
  say('conservation of the tenant with limits:');
  return (await checkConservation(pool, limited.tenantId, [...LEDGER_CHECKS, PIX_PAYOUT_CHECK])) && rows[0]!.counted === limited.payers.length;
}

// ---------------------------------------------------------------------------------------------------- settlement

/** The tenant's payouts by state, those created from `since` on when given. */
async function payoutStates(pool: pg.Pool, tenantId: string, from?: Date): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from pix_payout where tenant_id = $1 and created_at >= coalesce($2::timestamptz, '-infinity') group by status`,
    [tenantId, from?.toISOString() ?? null],
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}

const countOpen = (states: Map<string, number>) => OPEN_STATES.reduce((n, s) => n + (states.get(s) ?? 0), 0);
const describeStates = (states: Map<string, number>) => [...states].map(([s, n]) => `${n} ${s}`).join(', ') || 'none';

interface Drain {
  /** From the phase's end until no payout of the tenant was open; NaN when the timeout came first. */
  drainMs: number;
  openAtEnd: number;
  posted: number;
  notPosted: number;
  /** POSTED payouts of the phase per second, from its start to the last one's settlement. */
  endToEndRate: number;
}

/**
 * Waits until no payout of the tenant is open (REQUESTED or PROCESSING), and returns when that was, in ms after
 * `from` (a `Date.now()` value); NaN when `--drain-timeout` passed first.
 */
async function untilAllFinal(pool: pg.Pool, tenantId: string, from: number): Promise<number> {
  let lastReport = Date.now();
  for (;;) {
    const open = countOpen(await payoutStates(pool, tenantId));
    if (open === 0) return Date.now() - from;
    if (Date.now() - from > DRAIN_TIMEOUT_MS) {
      say(`  ${open} payouts still open after ${seconds(DRAIN_TIMEOUT_MS)} (--drain-timeout); going on`);
      return NaN;
    }
    if (Date.now() - lastReport >= 10_000) {
      say(`    ${open} payouts open, ${seconds(Date.now() - from)} on`);
      lastReport = Date.now();
    }
    await sleep(DRAIN_POLL_MS);
  }
}

/** Waits until every payout of the tenant is final, then counts those the phase created. */
async function drain(pool: pg.Pool, tenantId: string, phaseStart: Date, phaseEnd: number): Promise<Drain> {
  const openAtEnd = countOpen(await payoutStates(pool, tenantId, phaseStart));
  const drainMs = await untilAllFinal(pool, tenantId, phaseEnd);
  const states = await payoutStates(pool, tenantId, phaseStart);
  const posted = states.get('POSTED') ?? 0;
  const total = [...states.values()].reduce((a, b) => a + b, 0);
  const endToEndRate = posted / ((phaseEnd - phaseStart.getTime() + drainMs) / 1000);
  say(`  payouts of the phase: ${describeStates(states)}; ${openAtEnd} were open when it ended`);
  say(`  drain             ${Number.isNaN(drainMs) ? 'not finished' : seconds(drainMs)} after the phase; ${endToEndRate.toFixed(1)} POSTED/s end to end`);
  return { drainMs, openAtEnd, posted, notPosted: total - posted, endToEndRate };
}

/**
 * `rate` payments a second for `seconds`, each sent on time whatever the earlier ones are doing (open loop), and the
 * delay from each payout's `created_at` to the poll that first saw it POSTED.
 */
async function steady(pool: pg.Pool, payers: Payer[]): Promise<{ tally: PixTally; delays: Latencies; otherFinal: Map<string, number>; unfinished: number }> {
  const t = newTally();
  const delays = new Latencies();
  const otherFinal = new Map<string, number>();
  const seen = new Set<string>();
  const start = performance.now();
  const count = Math.round(STEADY_RATE * STEADY_SECONDS);
  let sending = true;
  const sent = (async () => {
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = start + (i * 1000) / STEADY_RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      inFlight.push(pay(payers[i % payers.length]!, t));
    }
    await Promise.all(inFlight);
    t.elapsedMs = since(start);
    sending = false;
  })();

  const deadline = start + STEADY_SECONDS * 1000 + DRAIN_TIMEOUT_MS;
  for (;;) {
    const pending = t.payoutIds.filter((id) => !seen.has(id));
    if (pending.length) {
      const { rows } = await pool.query<{ id: string; status: string; created_ms: number }>(
        `select id, status, extract(epoch from created_at)::float8 * 1000 as created_ms from pix_payout where id = any($1) and status <> all($2)`,
        [pending, OPEN_STATES],
      );
      const now = Date.now();
      for (const r of rows) {
        seen.add(r.id);
        if (r.status === 'POSTED') delays.add(now - r.created_ms);
        else otherFinal.set(r.status, (otherFinal.get(r.status) ?? 0) + 1);
      }
    }
    if (!sending && seen.size === t.payoutIds.length) break;
    if (performance.now() > deadline) {
      say(`  ${t.payoutIds.length - seen.size} payouts still open after --drain-timeout; going on`);
      break;
    }
    await sleep(STEADY_POLL_MS);
  }
  await sent;
  return { tally: t, delays, otherFinal, unfinished: t.payoutIds.length - seen.size };
}

// --------------------------------------------------------------------------------------------------------- idle

/**
 * The Temporal dev server `npm start` runs for this platform (by its port), or the Temporal server of
 * `npm run start:cluster`, and a worker started beside it (the cluster's first).
 */
function platformProcesses(): { temporal: Proc | undefined; worker: Proc | undefined } {
  const all = processes();
  const port = config.TEMPORAL_ADDRESS.split(':')[1];
  const temporal =
    all.find((p) => / server start-dev /.test(p.command) && new RegExp(`(^| )--port ${port}( |$)`).test(p.command)) ??
    all.find((p) => /\/temporal-server-v[\d.]+\/server .* start$/.test(p.command));
  const workers = all.filter((p) => p.command.includes('worker/main.ts'));
  const startedByNpmStart = (p: Proc) => /scripts\/start(-cluster)?\.ts/.test(all.find((parent) => parent.pid === p.ppid)?.command ?? '');
  const worker = workers.find((w) => temporal && w.ppid === temporal.ppid) ?? workers.find(startedByNpmStart);
  return { temporal, worker };
}

async function runningPayoutWorkflows(): Promise<number> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    return (await new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }).workflow.count(RUNNING_PAYOUTS_QUERY)).count;
  } finally {
    await connection.close();
  }
}

interface Idle {
  running: number;
  temporalCpu: number;
  workerCpu: number;
}

async function idleCheck(): Promise<Idle> {
  say(`\nidle: ${IDLE_SECONDS} s after the last payout became final (load average: ${loadAverage()})`);
  await sleep(IDLE_SECONDS * 1000);
  const running = await runningPayoutWorkflows();
  say(`  running payout workflows (${RUNNING_PAYOUTS_QUERY}): ${running}`);
  const { temporal, worker } = platformProcesses();
  for (const [name, p] of [['Temporal server', temporal], ['worker', worker]] as const) say(`  ${name.padEnd(16)} ${p ? `pid ${p.pid}: ${p.command.slice(0, 100)}` : 'not found'}`);
  const cpu = await cpuOver([temporal, worker].flatMap((p) => (p ? [p.pid] : [])), CPU_SECONDS);
  const of = (p: Proc | undefined) => (p ? cpu.get(p.pid)! : NaN);
  const [temporalCpu, workerCpu] = [of(temporal), of(worker)];
  say(`  CPU over ${CPU_SECONDS} s, % of one core: Temporal server ${temporalCpu.toFixed(1)}, worker ${workerCpu.toFixed(1)}, together ${(temporalCpu + workerCpu).toFixed(1)}`);
  return { running, temporalCpu, workerCpu };
}

// ------------------------------------------------------------------------------------------------------- main

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main(): Promise<number> {
  say(`bench/pix.ts: ${SECONDS} s a phase, clients ${CLIENT_COUNTS.join('/')}, ${PAYERS} payers, steady ${STEADY_RATE}/s for ${STEADY_SECONDS} s; ${os.cpus().length} CPUs; ${holderUrl}`);
  say(`platform settings as this process reads them: SANDBOX_PIX_SETTLE_MS ${config.SANDBOX_PIX_SETTLE_MS}, PIX_NOTIFICATION_WAIT_MS ${config.PIX_NOTIFICATION_WAIT_MS}, PIX_QUERY_MAX_WAIT_MS ${config.PIX_QUERY_MAX_WAIT_MS}`);
  await assertPlatformUp();
  const before = await runningPayoutWorkflows();
  if (before > 0) say(`note: ${before} payout workflows already running (earlier runs): they load Temporal and the worker during this one`);
  const pool = openPool();
  const figures: Figure[] = [];
  try {
    const tev = await setUpTev(pool, TEV_PAIRS);
    const pix = await setUpPix(pool);

    const tevCpu = cpuSnapshot();
    const tevLoad = await runLoad('HTTP POST /v1/tev (for the ratio)', MOST_CLIENTS, SECONDS, (deadline, res) => httpClient(tev, HOT_SHARE, deadline, res));
    const tevRate = printLoad(tevLoad, 200, 'done');
    say(`  CPU               ${describeCpu(cpuBetween(tevCpu, cpuSnapshot()))}`);
    figures.push({ what: `TEV over HTTP, ${MOST_CLIENTS} clients (20% hot account)`, rate: tevRate, latencies: tevLoad.all, errors: errorsOf(tevLoad, 200) });

    say(`\nTemporal floor: empty Update-with-Start workflows, ${MOST_CLIENTS} clients for ${SECONDS} s on ${config.TEMPORAL_ADDRESS}`);
    const floor = await measureTemporalFloor(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, MOST_CLIENTS, SECONDS);
    const floorRate = floor.completed / (floor.elapsedMs / 1000);
    say(`  ${floorRate.toFixed(1)} workflows/s; ${floor.latencies.line('latency')}; errors ${floor.errors}`);
    figures.push({ what: `Temporal floor (empty workflow), ${MOST_CLIENTS} clients`, rate: floorRate, latencies: floor.latencies, errors: floor.errors });

    const phases = new Map<number, { tally: PixTally; rate: number; drain: Drain }>();
    for (const clients of CLIENT_COUNTS) {
      say(`\nHTTP POST /pix/payment (R$ ${AMOUNT_REAIS.toFixed(2)} by key): ${clients} client loops for ${SECONDS} s (load average before: ${loadAverage()})`);
      const phaseStart = new Date();
      const phaseCpu = cpuSnapshot();
      const tally = await closedLoop(pix.payers, clients);
      const phaseEnd = Date.now();
      const drainCpu = cpuSnapshot();
      const rate = printPix(tally);
      say(`  CPU               ${describeCpu(cpuBetween(phaseCpu, drainCpu))}`);
      phases.set(clients, { tally, rate, drain: await drain(pool, pix.tenantId, phaseStart, phaseEnd) });
      say(`  CPU, drain        ${describeCpu(cpuBetween(drainCpu, cpuSnapshot()))}`);
      const target = clients === MOST_CLIENTS ? '>= 0.8 x TEV/s, p99 <= 60 ms, 0 errors' : clients === 1 ? 'p50 <= 5 ms' : undefined;
      figures.push({ what: `Pix accepted, ${clients} client${clients > 1 ? 's' : ''}`, rate, latencies: tally.all, errors: pixErrors(tally), target });
    }
    const burst = phases.get(MOST_CLIENTS)!;
    figures.push({
      what: `drain of the ${MOST_CLIENTS}-client burst, POSTED end to end`,
      rate: burst.drain.endToEndRate,
      latencies: new Latencies(),
      errors: burst.drain.notPosted,
      target: '>= 0.5 x Temporal floor',
    });

    const limitsPass = args.limits ? await compareLimits(pool, pix, figures) : true;

    say(`\nsteady: ${STEADY_RATE} payments/s for ${STEADY_SECONDS} s, commit -> POSTED (polled every ${STEADY_POLL_MS} ms) (load average before: ${loadAverage()})`);
    const steadyRun = await steady(pool, pix.payers);
    printPix(steadyRun.tally);
    say(`  ${steadyRun.delays.line('commit -> POSTED')}`);
    if (steadyRun.otherFinal.size) say(`  final but not POSTED: ${describeStates(steadyRun.otherFinal)}`);
    const settleBound = config.SANDBOX_PIX_SETTLE_MS + 3000;
    figures.push({
      what: `commit -> POSTED at ${STEADY_RATE}/s (ms)`,
      rate: accepted(steadyRun.tally) / (steadyRun.tally.elapsedMs / 1000),
      latencies: steadyRun.delays,
      errors: pixErrors(steadyRun.tally) + steadyRun.unfinished + [...steadyRun.otherFinal.values()].reduce((a, b) => a + b, 0),
      target: `p99 <= settle delay + 3 s (${settleBound} ms)`,
    });

    // "After the last payout is final": every payout of the tenant, not only the steady phase's answered ones.
    const open = countOpen(await payoutStates(pool, pix.tenantId));
    if (open > 0) {
      say(`\nwaiting for ${open} open payouts before the idle check`);
      say(`  all final ${seconds(await untilAllFinal(pool, pix.tenantId, Date.now()))} later`);
    }
    const idle = await idleCheck();

    say('\nconservation, TEV tenant:');
    let pass = await checkConservation(pool, tev.tenantId);
    say('conservation, Pix tenant:');
    pass = (await checkConservation(pool, pix.tenantId, [...LEDGER_CHECKS, PIX_PAYOUT_CHECK])) && pass;
    pass = limitsPass && pass;

    const single = phases.get(1);
    printSummary(figures, [
      ['Pix accepted / TEV, same client count', burst.rate / tevRate, '>= 0.8'],
      ['burst drain / Temporal floor', burst.drain.endToEndRate / floorRate, '>= 0.5'],
    ]);
    say(`  ${'running payout workflows, idle'.padEnd(46)} ${String(idle.running).padStart(8)}  0`);
    say(`  ${'Temporal server + worker CPU, idle (% core)'.padEnd(46)} ${(idle.temporalCpu + idle.workerCpu).toFixed(1).padStart(8)}  < 5`);

    const { p50: p50Single } = single?.tally.all.summary() ?? { p50: NaN };
    const { p99: p99Burst } = burst.tally.all.summary();
    say('\ntargets (issue 23):');
    say(`  accepted Pix/s at ${MOST_CLIENTS} clients >= 0.8 x TEV/s, p99 <= 60 ms, 0 errors: ${met(burst.rate >= 0.8 * tevRate && p99Burst <= 60 && pixErrors(burst.tally) === 0)}`);
    if (single) say(`  single-client p50 <= 5 ms: ${met(p50Single <= 5)}`);
    say(`  burst drain >= 0.5 x Temporal floor: ${met(burst.drain.endToEndRate >= 0.5 * floorRate)}`);
    say(`  commit -> POSTED p99 <= ${settleBound} ms at ${STEADY_RATE}/s: ${met(steadyRun.delays.summary().p99 <= settleBound && steadyRun.unfinished === 0)}`);
    say(`  idle: 0 running payout workflows, Temporal server + worker < 5% of a core: ${met(idle.running === 0 && idle.temporalCpu + idle.workerCpu < 5)}`);
    say(`\nresult: ${pass ? 'PASS' : 'FAIL'} (conservation)`);
    return pass ? 0 : 1;
  } finally {
    await pool.end();
    closeHttp();
  }
}

process.exitCode = await main();
