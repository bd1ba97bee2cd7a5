/**
 * The request path's settlement queue, in process on the run's database: requests that wait while the lanes are busy
 * settle together in one `settle_tev_batch` transaction and answer exactly as they would alone; a batch the server
 * refuses settles again one request at a time; a request never joins a batch while a running batch holds one of its
 * accounts, nor overtakes an older request on one; a request whose caller stopped waiting is never sent.
 * Rows written by one transaction share its `xmin`, which is how the tests see which requests were batched.
 */
import { describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { SettlementQueue, type SettlementQueueConfig } from '../../src/transfers/settlement-queue.ts';
import { DeadlineExceeded } from '../../src/shared/time.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { domainDatabase, fund, onboardedHolder, type HolderAccount } from './support/accounts.ts';
import { tevSubmission } from './support/tev.ts';

const db = domainDatabase();

const queueConfig = (overrides: Partial<SettlementQueueConfig> = {}): SettlementQueueConfig => ({
  TEV_MAX_AMOUNT_CENTS: 1_000_000n,
  TEV_BATCH_MAX: 16,
  TEV_BATCH_LANES: 1,
  TEV_RESPONSE_DEADLINE_MS: 5_000,
  ...overrides,
});

interface World {
  tenantId: string;
  ana: HolderAccount;
  bia: HolderAccount;
}

/** Two holders with R$ 100,00 each, in a tenant charging R$ 0,10 to send. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ tevOut: 10n });
  const [ana, bia] = await Promise.all([onboardedHolder(em, tenantId, 'Ana Souza'), onboardedHolder(em, tenantId, 'Bia Lima')]);
  await fund(em, tenantId, ana.accountId, 10_000n);
  await fund(em, tenantId, bia.accountId, 10_000n);
  return { tenantId, ana, bia };
}

const transfer = (w: World, from: HolderAccount, to: TevSubmission['destination'], amountCents: bigint): TevSubmission =>
  tevSubmission(w.tenantId, from.accountId, to, amountCents);

/** The transaction that wrote each transfer's record. */
const writersOf = async (tevIds: string[]): Promise<Map<string, string>> =>
  new Map(
    (await sql<{ id: string; xmin: string }>('select id, xmin::text as xmin from tev_transfer where id = any($1)', [tevIds])).map((r) => [r.id, r.xmin]),
  );

describe('requests that wait for a lane settle together, answering as they would alone', () => {
  test('both directions, a duplicate, a refusal and a FAILED transfer in one batch; money moves once', async () => {
    const w = await world();
    const queue = new SettlementQueue(db.em(), queueConfig());
    // The first takes the only lane at once; the rest wait for it and leave as one batch.
    const first = transfer(w, w.ana, { accountId: w.bia.accountId }, 100n);
    const byNumber = transfer(w, w.ana, { branch: '1', account: `00${w.bia.number}` }, 200n);
    const reverse = transfer(w, w.bia, { accountId: w.ana.accountId }, 300n);
    const unknownDestination = transfer(w, w.bia, { branch: '9999', account: '1' }, 400n);
    const tooMuch = transfer(w, w.ana, { accountId: w.bia.accountId }, 20_000n);
    const [a, b, c, d, e, duplicate] = await Promise.all(
      [first, byNumber, reverse, unknownDestination, tooMuch, byNumber].map((s) => queue.settle(s)),
    );

    expect(a).toMatchObject({ code: 'DONE', outcome: { tevId: first.tevId, feeCents: '10' } });
    expect(b).toMatchObject({ code: 'DONE', outcome: { tevId: byNumber.tevId, amountCents: '200' } });
    expect(duplicate).toEqual(b);
    expect(c).toMatchObject({ code: 'DONE', outcome: { tevId: reverse.tevId } });
    expect(d).toEqual({ code: 'DESTINATION_NOT_FOUND', destinationId: null });
    expect(e).toMatchObject({ code: 'FAILED', outcome: { reason: 'INSUFFICIENT_BALANCE' } });

    const writers = await writersOf([first.tevId, byNumber.tevId, reverse.tevId, tooMuch.tevId]);
    expect(writers.size).toBe(4);
    expect(writers.get(first.tevId)).not.toBe(writers.get(byNumber.tevId));
    expect(new Set([byNumber.tevId, reverse.tevId, tooMuch.tevId].map((id) => writers.get(id))).size).toBe(1);
    expect(await balanceOf(w.ana.accountId)).toBe(10_000n - 100n - 200n - 2n * 10n + 300n);
    expect(await balanceOf(w.bia.accountId)).toBe(10_000n + 100n + 200n - 300n - 10n);
  });

  test('a request waits while a running batch holds its source or its destination, and never overtakes an older one', async () => {
    const w = await world();
    const em = db.em();
    const holder = (name: string) => onboardedHolder(em, w.tenantId, name);
    const [caio, duda, eva, fabi] = await Promise.all([holder('Caio Reis'), holder('Duda Alves'), holder('Eva Prado'), holder('Fabi Costa')]);
    await Promise.all([caio, duda, eva].map((h) => fund(em, w.tenantId, h.accountId, 10_000n)));
    const queue = new SettlementQueue(db.em(), queueConfig({ TEV_BATCH_LANES: 2 }));
    const first = transfer(w, w.ana, { accountId: w.bia.accountId }, 10n);
    // Its destination, Ana, is in the running batch.
    const toAna = transfer(w, caio, { accountId: w.ana.accountId }, 10n);
    // Caio's account is free, but the older request above waits for it: this one may not go first.
    const toCaio = transfer(w, duda, { accountId: caio.accountId }, 10n);
    const elsewhere = transfer(w, eva, { accountId: fabi.accountId }, 10n);
    const fromAnaAgain = [transfer(w, w.ana, { accountId: w.bia.accountId }, 10n), transfer(w, w.ana, { accountId: w.bia.accountId }, 10n)];
    const all = [first, toAna, toCaio, elsewhere, ...fromAnaAgain];
    const settled = await Promise.all(all.map((s) => queue.settle(s)));
    expect(settled.map((s) => s.code)).toEqual(Array(all.length).fill('DONE'));

    const writers = await writersOf(all.map((s) => s.tevId));
    const writer = (s: TevSubmission) => BigInt(writers.get(s.tevId)!);
    // The first went alone; Eva's took the other lane; everything waiting on Ana's and Caio's accounts left together
    // after the first committed.
    expect(writer(elsewhere)).not.toBe(writer(first));
    expect(new Set([toAna, toCaio, ...fromAnaAgain].map(writer))).toEqual(new Set([writer(toAna)]));
    expect(writer(toAna)).toBeGreaterThan(writer(first));
    expect(await balanceOf(w.ana.accountId)).toBe(10_000n - 3n * (10n + 10n) + 10n);
    expect(await balanceOf(caio.accountId)).toBe(10_000n - 10n - 10n + 10n);
  });
});

test('a batch the server refuses is settled again one request at a time: only the faulty request fails', async () => {
  const w = await world();
  const queue = new SettlementQueue(db.em(), queueConfig());
  const first = transfer(w, w.ana, { accountId: w.bia.accountId }, 100n);
  const good = [transfer(w, w.ana, { accountId: w.bia.accountId }, 200n), transfer(w, w.bia, { accountId: w.ana.accountId }, 300n)];
  // Never sent by the api (the tenant comes from the credential); here it makes the server refuse the batch.
  const faulty = { ...transfer(w, w.bia, { accountId: w.ana.accountId }, 400n), tenantId: 'not-a-uuid' };
  const results = await Promise.allSettled([first, ...good, faulty].map((s) => queue.settle(s)));

  expect(results.map((r) => (r.status === 'fulfilled' ? r.value.code : 'rejected'))).toEqual(['DONE', 'DONE', 'DONE', 'rejected']);
  expect(results[3]).toMatchObject({ status: 'rejected', reason: { code: '22P02' } });
  const writers = await writersOf(good.map((s) => s.tevId));
  expect(new Set(writers.values()).size).toBe(2);
  expect(await balanceOf(w.ana.accountId)).toBe(10_000n - 100n - 200n - 2n * 10n + 300n);
});

test('a request whose caller stopped waiting is never sent: its resolution workflow owns it', async () => {
  const w = await world();
  const queue = new SettlementQueue(db.em(), queueConfig({ TEV_RESPONSE_DEADLINE_MS: 200 }));
  // Another transaction holds Ana's account, so the first request holds the only lane past the second's deadline.
  const blocker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('select 1 from account where id = $1 for update', [w.ana.accountId]);
    const first = transfer(w, w.ana, { accountId: w.bia.accountId }, 100n);
    const late = transfer(w, w.bia, { accountId: w.ana.accountId }, 100n);
    const settling = [queue.settle(first), queue.settle(late)];
    await new Promise((resolve) => setTimeout(resolve, 400));
    await blocker.query('commit');
    const [a, b] = await Promise.allSettled(settling);
    expect(a).toMatchObject({ status: 'fulfilled', value: { code: 'DONE' } });
    expect(b).toMatchObject({ status: 'rejected', reason: expect.any(DeadlineExceeded) });
    expect(await writersOf([late.tevId])).toEqual(new Map());
  } finally {
    await blocker.end();
  }
});
