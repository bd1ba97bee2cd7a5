import { randomInt, randomUUID } from 'node:crypto';
import os from 'node:os';
import type pg from 'pg';
import { request } from './http.ts';
import { admin, apiUrl, fundAccounts, mapLimit, registerHolders, say, timed, type BenchAccount } from './platform.ts';
import { Latencies, seconds, since } from './stats.ts';

/**
 * The TEV load of `bench/tev.ts`, shared with the benches that compare against it (`bench/pix.ts`): its tenant of
 * holder pairs and a hot account, the transfer mix, and the HTTP client loops with their tallies.
 */

export const HOT_SHARE = 0.2;

// Funding far above what a run can spend (amounts are 1..1000 cents), so no transfer is refused for balance:
// a 422 in the results means something else went wrong.
const SOURCE_FUNDING_CENTS = 100_000_000n; // R$ 1,000,000.00
const HOT_FUNDING_CENTS = 1_000_000_000n; // R$ 10,000,000.00

/**
 * API keys: one `node src/admin/cli.ts api-key:create` process per key, as an operator would, run in parallel
 * batches of 4. Each process spends ~1 s of CPU loading Node, the ORM and the Temporal client before one insert, so
 * on 2 cores more than 4 at once buys nothing.
 */
const KEY_PARALLELISM = 4;

export interface Source extends BenchAccount {
  apiKey: string;
}

export interface TevSetup {
  tenantId: string;
  pairs: { source: Source; destination: BenchAccount }[];
  hot: Source;
  destinations: BenchAccount[];
}

export interface Transfer {
  source: Source;
  destination: BenchAccount;
  hot: boolean;
}

/** The mix: 80% a random pair, 20% the hot account to a random destination (`hotShare` 1: the hot account alone). */
export function pickTransfer(s: TevSetup, hotShare = HOT_SHARE): Transfer {
  if (Math.random() < hotShare) {
    return { source: s.hot, destination: s.destinations[randomInt(s.destinations.length)]!, hot: true };
  }
  const pair = s.pairs[randomInt(s.pairs.length)]!;
  return { ...pair, hot: false };
}

/** 1 to 1000 cents, never ending in ,97 or ,98: the sandbox answers those `submitted_unknown` on purpose. */
export const amountCents = () => {
  const cents = randomInt(1, 1001);
  return cents % 100 === 97 || cents % 100 === 98 ? cents - 2 : cents;
};

// ---------------------------------------------------------------------------------------------------------- setup

/** A new tenant with `pairs` holder pairs and one hot source account, every source funded and given an API key. */
export async function setUpTev(pool: pg.Pool, pairs: number): Promise<TevSetup> {
  say(`setup: 1 tenant, ${pairs} pairs + 1 hot account (${2 * pairs + 1} holders)`);
  const start = performance.now();
  const { tenantId } = await timed('tenant:create (operator CLI)', () => admin('tenant:create', '--name', `bench-tev ${new Date().toISOString()}`));

  // In registration order: holder 2i is pair i's source, 2i + 1 its destination, the last one the hot account.
  const accounts = (await registerHolders(pool, tenantId, 2 * pairs + 1, 'Titular Bench')).map((h) => h.account);
  const sources = [...accounts.filter((_, i) => i % 2 === 0 && i < 2 * pairs), accounts[2 * pairs]!];

  const hotAccount = sources.at(-1)!;
  await timed(`funding ${sources.length} sources (sandbox incoming Pix)`, () =>
    fundAccounts(tenantId, sources, (a) => (a === hotAccount ? HOT_FUNDING_CENTS : SOURCE_FUNDING_CENTS)),
  );
  const keyed = await timed(`api-key:create (${sources.length} processes, ${KEY_PARALLELISM} at once)`, () =>
    mapLimit(sources, KEY_PARALLELISM, async (a): Promise<Source> => {
      const { key } = await admin('api-key:create', '--tenant', tenantId, '--pix-account', a.pixAccountId);
      return { ...a, apiKey: key };
    }),
  );
  say(`  setup total ${seconds(since(start))} (tenant ${tenantId})`);

  const destinations = accounts.filter((_, i) => i % 2 === 1);
  return { tenantId, pairs: destinations.map((destination, i) => ({ source: keyed[i]!, destination })), hot: keyed[pairs]!, destinations };
}

// ----------------------------------------------------------------------------------------------------- HTTP load

export interface LoadResult {
  elapsedMs: number;
  all: Latencies;
  hot: Latencies;
  pairs: Latencies;
  byStatus: Map<number, number>;
  rejections: Map<string, number>;
  samples: Map<number, unknown>;
}

export function newResult(): LoadResult {
  return { elapsedMs: 0, all: new Latencies(), hot: new Latencies(), pairs: new Latencies(), byStatus: new Map(), rejections: new Map(), samples: new Map() };
}

export function record(r: LoadResult, hot: boolean, status: number, ms: number, detail?: string, body?: unknown) {
  r.all.add(ms);
  (hot ? r.hot : r.pairs).add(ms);
  r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
  if (detail) r.rejections.set(detail, (r.rejections.get(detail) ?? 0) + 1);
  if (status !== 200 && !r.samples.has(status)) r.samples.set(status, body);
}

/** One client: a request at a time, back to back, until the deadline. Status 0 is a network error. */
export const httpClient = (s: TevSetup, hotShare: number, deadline: number, r: LoadResult) => httpClientUntil(s, hotShare, () => performance.now() >= deadline, r);

/** One client, until `stop()` holds (a phase that ends with something else than a time: a batch's end). */
export async function httpClientUntil(s: TevSetup, hotShare: number, stop: () => boolean, r: LoadResult) {
  while (!stop()) {
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

export async function runLoad(name: string, clients: number, phaseSeconds: number, client: (deadline: number, r: LoadResult) => Promise<void>): Promise<LoadResult> {
  say(`\n${name}: ${clients} client loops for ${phaseSeconds} s (load average before: ${loadAverage()})`);
  const r = newResult();
  const start = performance.now();
  const deadline = start + phaseSeconds * 1000;
  await Promise.all(Array.from({ length: clients }, () => client(deadline, r)));
  r.elapsedMs = since(start);
  return r;
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export function printLoad(r: LoadResult, okStatus: number, okName: string): number {
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

/** Everything that was not the expected answer: other statuses, network errors. */
export const errorsOf = (r: LoadResult, okStatus: number) => [...r.byStatus].filter(([s]) => s !== okStatus && s !== 422).reduce((n, [, c]) => n + c, 0);
