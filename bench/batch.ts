/**
 * Batch payouts against a running platform (`npm start`, sandbox on), beside their baselines in the same run.
 *
 *   node bench/batch.ts [--items 5000] [--seconds 15] [--clients 8] [--pairs 50] [--payees 20] [--payers 16]
 *                       [--drain-timeout 900] [--beside-seconds N]
 *
 * 1. Setup: the TEV tenant of `bench/tev.ts` (`pairs` pairs and a hot account, one API key per source), whose
 *    transfers are the unrelated load; a PIN-exempt Pix tenant with `payers` funded holders and client tokens, for the
 *    Pix baseline; and a batch tenant: one payer (funded, an API key) and `payees` holders its TEV items pay.
 * 2. Baselines: `POST /v1/tev` at 32 clients for `seconds` (the TEV rate of `bench/tev.ts`); the unrelated load alone,
 *    `POST /v1/tev` at `clients` clients for `seconds` (the quiet p99); a Pix burst, `POST /pix/payment` R$ 0.01 to a
 *    random EVP key at 32 clients for `seconds`, and its drain: its payouts POSTED per second from the burst's start to
 *    the last one's (the drain rate of `bench/pix.ts`).
 * 3. A batch of `items` TEVs to the payees, then one of `items` Pix to random EVP keys (each key resolved by the
 *    sandbox directory): `POST /v1/pix-accounts/:accountId/batches`, then `GET` every 250 ms until it ends. Each kind
 *    twice: alone, on the otherwise quiet platform, for its rate (its items over the time from the POST to its end,
 *    validation included; the POST's own time is the validation's); then again with the unrelated load at `clients`
 *    clients from the POST to the batch's end, whose p99 is set beside the quiet one. With `--beside-seconds N`, the
 *    load beside a batch runs for N seconds of it at most, and then the batch's unpaid items are cancelled
 *    (`POST …/batches/:batchId/cancel`): a Pix batch giving way to the load pays a few items a second, so a whole
 *    5,000 beside it takes most of an hour here. Its rate beside the load is then its items paid in those N seconds.
 * 4. Conservation of the three tenants' ledgers (exit 1 on FAIL), then the figures beside the targets of issue 26.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { checkConservation, LEDGER_CHECKS, PIX_PAYOUT_CHECK, TEV_CHECK } from './lib/conservation.ts';
import { closeHttp, request } from './lib/http.ts';
import { setUpPixPayers, type PixPayer as LoadPayer } from './lib/pix-load.ts';
import * as platformLib from './lib/platform.ts';
import { admin, apiUrl, assertPlatformUp, config, fundAccounts, holderUrl, openPool, registerHolders, say, timed, type BenchAccount } from './lib/platform.ts';
import { Latencies, seconds, since } from './lib/stats.ts';
import { printSummary, type Figure } from './lib/summary.ts';
import { errorsOf, HOT_SHARE, httpClient, httpClientUntil, loadAverage, newResult, printLoad, runLoad, setUpTev, type LoadResult, type TevSetup } from './lib/tev-load.ts';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '15' },
    clients: { type: 'string', default: '8' },
    pairs: { type: 'string', default: '50' },
    payees: { type: 'string', default: '20' },
    payers: { type: 'string', default: '16' },
    'drain-timeout': { type: 'string', default: '900' },
    'beside-seconds': { type: 'string' },
  },
});
const ITEMS = Number(args.items);
const SECONDS = Number(args.seconds);
const CLIENTS = Number(args.clients);
const PAIRS = Number(args.pairs);
const PAYEES = Number(args.payees);
const PAYERS = Number(args.payers);
const DRAIN_TIMEOUT_MS = Number(args['drain-timeout']) * 1000;
/** How long the load runs beside a batch before the batch's unpaid items are cancelled; unset, until the batch ends. */
const BESIDE_MS = args['beside-seconds'] === undefined ? Infinity : Number(args['beside-seconds']) * 1000;
/** The client count of `bench/tev.ts`'s and `bench/pix.ts`'s headline figures. */
const BASELINE_CLIENTS = 32;

/** Far above what the batches spend (at most 1,049 cents and the fee an item), so a refusal is a defect. */
const FUNDING_CENTS = 1_000_000_000n; // R$ 10,000,000.00
const POLL_MS = 250;
const OPEN_STATES = ['REQUESTED', 'PROCESSING'];

// ---------------------------------------------------------------------------------------------------------- setup

interface BatchSetup {
  tenantId: string;
  payer: BenchAccount & { apiKey: string };
  payees: BenchAccount[];
}

async function setUpBatchTenant(pool: pg.Pool): Promise<BatchSetup> {
  say(`setup: the batch tenant, 1 payer and ${PAYEES} payees`);
  const { tenantId } = await timed('tenant:create (operator CLI)', () => admin('tenant:create', '--name', `bench-batch ${new Date().toISOString()}`));
  const [payer, ...payees] = (await registerHolders(pool, tenantId, PAYEES + 1, 'Titular Lote')).map((h) => h.account);
  await timed('funding the payer (sandbox incoming Pix)', () => fundAccounts(tenantId, [payer!], () => FUNDING_CENTS));
  const { key } = await timed('api-key:create (operator CLI)', () => admin('api-key:create', '--tenant', tenantId, '--pix-account', payer!.pixAccountId));
  return { tenantId, payer: { ...payer!, apiKey: key }, payees };
}

interface PixPayer extends LoadPayer {
  tenantId: string;
}

async function setUpPix(pool: pg.Pool): Promise<{ tenantId: string; payers: PixPayer[] }> {
  say(`setup: the Pix baseline's PIN-exempt tenant, ${PAYERS} payers`);
  const { tenantId, payers } = await setUpPixPayers(platformLib, pool, `bench-batch-pix ${new Date().toISOString()}`, PAYERS, FUNDING_CENTS);
  return { tenantId, payers: payers.map((p) => ({ ...p, tenantId })) };
}

// ------------------------------------------------------------------------------------------------ Pix baseline

/** Open payouts of the tenant (REQUESTED, PROCESSING) and those POSTED, from `from` on. */
async function payoutCounts(pool: pg.Pool, tenantId: string, from: Date): Promise<{ open: number; posted: number; total: number }> {
  const { rows } = await pool.query<{ open: number; posted: number; total: number }>(
    `select count(*) filter (where status = any($3))::int as open, count(*) filter (where status = 'POSTED')::int as posted, count(*)::int as total
       from pix_payout where tenant_id = $1 and created_at >= $2`,
    [tenantId, from.toISOString(), OPEN_STATES],
  );
  return rows[0]!;
}

/** `bench/pix.ts`'s burst at 32 clients and its drain: its payouts POSTED per second, from its start to the last one's. */
async function pixDrainBaseline(pool: pg.Pool, pix: { tenantId: string; payers: PixPayer[] }): Promise<{ rate: number; accepted: Latencies; errors: number }> {
  say(`\nPix baseline: POST /pix/payment (R$ 0.01 by key) at ${BASELINE_CLIENTS} clients for ${SECONDS} s, then its drain (load average before: ${loadAverage()})`);
  const start = new Date();
  const deadline = performance.now() + SECONDS * 1000;
  const accepted = new Latencies();
  let errors = 0;
  await Promise.all(
    Array.from({ length: BASELINE_CLIENTS }, async (_, i) => {
      const payer = pix.payers[i % pix.payers.length]!;
      while (performance.now() < deadline) {
        const sent = performance.now();
        const res = await request('POST', `${holderUrl}/pix/payment`, {
          body: { accountId: payer.accountId, pixKey: randomUUID(), pixKeyType: 'EVP', amount: 0.01 },
          headers: { 'x-tenant-id': payer.tenantId, authorization: `Bearer ${payer.token}`, 'idempotency-key': randomUUID() },
        }).catch(() => ({ status: 0 }));
        if (res.status === 201 || res.status === 202) accepted.add(since(sent));
        else errors++;
      }
    }),
  );
  say(`  ${accepted.line('accepted')}; errors ${errors}`);
  const ended = await until(async () => (await payoutCounts(pool, pix.tenantId, start)).open === 0);
  const { posted, total } = await payoutCounts(pool, pix.tenantId, start);
  const rate = posted / ((ended - start.getTime()) / 1000);
  say(`  drained ${seconds(ended - start.getTime())} after the burst's start: ${posted} of ${total} POSTED, ${rate.toFixed(1)} POSTED/s end to end`);
  return { rate, accepted, errors: errors + total - posted };
}

/** Polls `done` every POLL_MS until it holds; when it did (a `Date.now()`), or NaN after `--drain-timeout`. */
async function until(done: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) {
      say(`  not done after ${seconds(DRAIN_TIMEOUT_MS)} (--drain-timeout); going on`);
      return NaN;
    }
    await sleep(POLL_MS);
  }
  return Date.now();
}

// -------------------------------------------------------------------------------------------------------- batches

interface BatchRun {
  kind: string;
  /** The unrelated TEVs while it ran; null for a batch run alone. */
  load: LoadResult | null;
  /** Items per second, from the POST to the batch's end. */
  rate: number;
  validationMs: number;
  totalMs: number;
  counts: Record<string, number>;
}

/**
 * One batch, POSTed and followed to its end; with `tev`, the unrelated TEV load runs beside it from the POST to its
 * end, or for `--beside-seconds`, when the batch's unpaid items are cancelled. Each run's items get references of
 * their own (`run`), as a new batch would.
 */
async function runBatch(kind: string, b: BatchSetup, items: { externalRef: string }[], tev: TevSetup | null): Promise<BatchRun> {
  say(`\n${kind} batch: ${items.length} items, ${tev ? `the unrelated TEV load at ${CLIENTS} clients beside it` : 'alone'} (load average before: ${loadAverage()})`);
  let ended = false;
  let loadEndedAt = NaN;
  const r = newResult();
  const loadStart = performance.now();
  const load = tev ? Promise.all(Array.from({ length: CLIENTS }, () => httpClientUntil(tev, HOT_SHARE, () => ended, r))) : null;
  const start = performance.now();
  const url = `${apiUrl}/v1/pix-accounts/${b.payer.pixAccountId}/batches`;
  const created = await request('POST', url, { body: { items }, headers: { authorization: `Bearer ${b.payer.apiKey}`, 'idempotency-key': randomUUID() } });
  const validationMs = since(start);
  if (created.status !== 202) {
    ended = true;
    throw new Error(`the ${kind} batch was refused: ${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
  }
  say(`  validated and accepted in ${seconds(validationMs)}: ${created.body.counts.total} items, ${created.body.counts.invalid} invalid (batch ${created.body.batchId})`);
  const auth = { authorization: `Bearer ${b.payer.apiKey}` };
  let batch: any;
  let lastReport = Date.now();
  // Cut short (--beside-seconds): when, and how many items were paid by then.
  let cut = null as { ms: number; paid: number } | null;
  const finishedAt = await until(async () => {
    batch = (await request('GET', `${url}/${created.body.batchId}`, { headers: auth })).body;
    if (Date.now() - lastReport >= 10_000) {
      say(`    ${JSON.stringify(batch.counts)}, ${seconds(since(start))} on`);
      lastReport = Date.now();
    }
    if (tev && cut === null && batch.finishedAt === null && since(start) >= BESIDE_MS) {
      ended = true;
      loadEndedAt = performance.now();
      cut = { ms: since(start), paid: batch.counts.paid };
      const cancelled = await request('POST', `${url}/${created.body.batchId}/cancel`, { headers: { ...auth, 'idempotency-key': randomUUID() } });
      if (cancelled.status !== 200) throw new Error(`the ${kind} batch's cancel was refused: ${cancelled.status} ${JSON.stringify(cancelled.body).slice(0, 500)}`);
      say(`  --beside-seconds: ${cut.paid} paid after ${seconds(cut.ms)}; the load stopped and the unpaid items cancelled`);
      batch = cancelled.body;
    }
    return batch.finishedAt !== null;
  });
  const totalMs = Number.isNaN(finishedAt) ? NaN : since(start);
  if (!ended) {
    ended = true;
    loadEndedAt = performance.now();
  }
  const rate = cut ? cut.paid / (cut.ms / 1000) : batch.counts.paid / (totalMs / 1000);
  say(`  ${batch.status} in ${seconds(totalMs)}: ${JSON.stringify(batch.counts)}; ${rate.toFixed(1)} items/s`);
  if (!load) return { kind, load: null, rate, validationMs, totalMs, counts: batch.counts };
  await load;
  r.elapsedMs = loadEndedAt - loadStart;
  say(`  the unrelated POST /v1/tev meanwhile, ${CLIENTS} clients for ${seconds(r.elapsedMs)}:`);
  printLoad(r, 200, 'done');
  return { kind, load: r, rate, validationMs, totalMs, counts: batch.counts };
}

/** 100 to 149 cents: never a sandbox outcome's cents (,91 to ,94 fail, cancel or return a Pix; ,97 and ,98 a TEV). */
const itemCents = (i: number) => String(100 + (i % 50));

// ------------------------------------------------------------------------------------------------------- main

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main(): Promise<number> {
  say(`bench/batch.ts: ${ITEMS} items a batch, baselines ${SECONDS} s, unrelated load at ${CLIENTS} clients; ${os.cpus().length} CPUs; ${apiUrl}`);
  say(`platform settings as this process reads them: BATCH_CHUNK_SIZE ${config.BATCH_CHUNK_SIZE}, BATCH_PIX_IN_FLIGHT ${config.BATCH_PIX_IN_FLIGHT}, SANDBOX_PIX_SETTLE_MS ${config.SANDBOX_PIX_SETTLE_MS}`);
  await assertPlatformUp();
  const pool = openPool();
  const figures: Figure[] = [];
  try {
    const tev = await setUpTev(pool, PAIRS);
    const pix = await setUpPix(pool);
    const b = await setUpBatchTenant(pool);

    const tevLoad = await runLoad(`TEV baseline: HTTP POST /v1/tev`, BASELINE_CLIENTS, SECONDS, (deadline, r) => httpClient(tev, HOT_SHARE, deadline, r));
    const tevRate = printLoad(tevLoad, 200, 'done');
    figures.push({ what: `TEV over HTTP, ${BASELINE_CLIENTS} clients (bench/tev.ts)`, rate: tevRate, latencies: tevLoad.all, errors: errorsOf(tevLoad, 200) });
    const quiet = await runLoad(`quiet: the unrelated POST /v1/tev alone`, CLIENTS, SECONDS, (deadline, r) => httpClient(tev, HOT_SHARE, deadline, r));
    figures.push({ what: `unrelated TEV, ${CLIENTS} clients, quiet`, rate: printLoad(quiet, 200, 'done'), latencies: quiet.all, errors: errorsOf(quiet, 200) });
    const pixBaseline = await pixDrainBaseline(pool, pix);
    figures.push({ what: `Pix burst drain, POSTED end to end (bench/pix.ts)`, rate: pixBaseline.rate, latencies: pixBaseline.accepted, errors: pixBaseline.errors });

    const tevItems = (run: string) =>
      Array.from({ length: ITEMS }, (_, i) => {
        const payee = b.payees[i % b.payees.length]!;
        return { kind: 'TEV', externalRef: `${run}-tev-${i}`, amountCents: itemCents(i), branch: payee.agency, account: payee.number, description: `Lote TEV ${i}` };
      });
    const pixItems = (run: string) => Array.from({ length: ITEMS }, (_, i) => ({ kind: 'PIX', externalRef: `${run}-pix-${i}`, amountCents: itemCents(i), pixKey: randomUUID(), pixKeyType: 'EVP' }));
    const tevAlone = await runBatch('TEV', b, tevItems('alone'), null);
    const tevBeside = await runBatch('TEV', b, tevItems('beside'), tev);
    const pixAlone = await runBatch('Pix', b, pixItems('alone'), null);
    const pixBeside = await runBatch('Pix', b, pixItems('beside'), tev);

    const quietP99 = quiet.all.summary().p99;
    for (const [alone, beside] of [[tevAlone, tevBeside], [pixAlone, pixBeside]] as const) {
      const target = alone.kind === 'TEV' ? `>= 0.5 x TEV rate (${(0.5 * tevRate).toFixed(0)}/s)` : `>= 0.5 x Pix drain (${(0.5 * pixBaseline.rate).toFixed(1)}/s)`;
      figures.push({ what: `${alone.kind} batch of ${ITEMS} alone, items/s`, rate: alone.rate, latencies: new Latencies(), errors: ITEMS - (alone.counts.paid ?? 0), target });
      figures.push({ what: `  its validation (the POST), ms`, rate: alone.validationMs, latencies: new Latencies(), errors: 0 });
      figures.push({ what: `${alone.kind} batch beside the unrelated load, items/s`, rate: beside.rate, latencies: new Latencies(), errors: ITEMS - (beside.counts.paid ?? 0) - (beside.counts.cancelled ?? 0) });
      const load = beside.load!;
      figures.push({ what: `unrelated TEV, ${CLIENTS} clients, during it`, rate: load.byStatus.get(200)! / (load.elapsedMs / 1000), latencies: load.all, errors: errorsOf(load, 200), target: `p99 <= 2 x quiet (${(2 * quietP99).toFixed(1)} ms)` });
    }

    say('\nconservation, TEV tenant:');
    let pass = await checkConservation(pool, tev.tenantId);
    say('conservation, Pix tenant:');
    pass = (await checkConservation(pool, pix.tenantId, [...LEDGER_CHECKS, PIX_PAYOUT_CHECK])) && pass;
    say('conservation, batch tenant:');
    pass = (await checkConservation(pool, b.tenantId, [...LEDGER_CHECKS, TEV_CHECK, PIX_PAYOUT_CHECK])) && pass;

    const p99 = (run: BatchRun) => run.load!.all.summary().p99;
    printSummary(figures, [
      ['TEV batch alone / TEV rate', tevAlone.rate / tevRate, '>= 0.5'],
      ['Pix batch alone / Pix drain', pixAlone.rate / pixBaseline.rate, '>= 0.5'],
      ['unrelated TEV p99, TEV batch / quiet', p99(tevBeside) / quietP99, '<= 2'],
      ['unrelated TEV p99, Pix batch / quiet', p99(pixBeside) / quietP99, '<= 2'],
    ]);
    say('\ntargets (issue 26):');
    say(`  TEV batch >= 0.5 x the TEV rate: ${met(tevAlone.rate >= 0.5 * tevRate)}`);
    say(`  Pix batch >= 0.5 x the Pix drain rate: ${met(pixAlone.rate >= 0.5 * pixBaseline.rate)}`);
    say(`  unrelated TEV p99 <= 2 x quiet, during each batch: ${met(p99(tevBeside) <= 2 * quietP99 && p99(pixBeside) <= 2 * quietP99)}`);
    say(`\nresult: ${pass ? 'PASS' : 'FAIL'} (conservation)`);
    return pass ? 0 : 1;
  } finally {
    await pool.end();
    closeHttp();
  }
}

process.exitCode = await main();
