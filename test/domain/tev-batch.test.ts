/**
 * `settle_tev_batch` in process, called as the settlement queue calls it (`settleTevBatch`) on the run's database: the
 * requests are decided in turn on the accounts as the requests before them left them, and written together, one
 * statement a table; each request answers as it would alone (`settleTev`). A retry, a second request with the same key
 * and a taken externalRef are answered by `settle_tev` after the batch. Every tenant's ledger stays consistent.
 */
import { describe, expect, test } from '@jest/globals';
import { settleTev, settleTevBatch } from '../../src/transfers/settlement.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { sql } from '../support/db.ts';
import { balanceOf, expectLedgerConsistent } from '../support/ledger.ts';
import { domainDatabase, fund, onboardedHolder, tenantAccountId, type HolderAccount } from './support/accounts.ts';
import { tevSubmission } from './support/tev.ts';

const config = { TEV_MAX_AMOUNT_CENTS: 500_000n };
const db = domainDatabase();

interface World {
  tenantId: string;
  ana: HolderAccount;
  bia: HolderAccount;
  caio: HolderAccount;
}

/** A tenant charging R$ 0,10 to send and R$ 0,05 to receive; Ana has R$ 10,00, Bia and Caio nothing. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ tevOut: 10n, tevIn: 5n });
  const [ana, bia, caio] = await Promise.all(['Ana Souza', 'Bia Lima', 'Caio Reis'].map((name) => onboardedHolder(em, tenantId, name)));
  await fund(em, tenantId, ana!.accountId, 1_000n);
  return { tenantId, ana: ana!, bia: bia!, caio: caio! };
}

const transfer = (w: World, from: HolderAccount, to: HolderAccount, amountCents: bigint, overrides: Partial<TevSubmission> = {}) =>
  tevSubmission(w.tenantId, from.accountId, { accountId: to.accountId }, amountCents, overrides);

const batch = (submissions: TevSubmission[]) => settleTevBatch(db.em(), config, submissions);

/** The transaction that wrote each transfer's record. */
const writersOf = async (tevIds: string[]) =>
  new Set((await sql<{ xmin: string }>('select xmin::text as xmin from tev_transfer where id = any($1)', [tevIds])).map((r) => r.xmin));

const eventsOf = (tevId: string) =>
  sql<{ type: string; account_id: string }>(
    `select type, account_id from event_outbox where data->>'tevTransferId' = $1 order by type`,
    [tevId],
  );

describe('a batch decides each request on what the requests before it moved', () => {
  test('money received earlier in the batch can be sent on; a balance spent earlier in the batch cannot', async () => {
    const w = await world();
    const toBia = transfer(w, w.ana, w.bia, 500n);
    const onToCaio = transfer(w, w.bia, w.caio, 480n);
    const tooMuch = transfer(w, w.bia, w.caio, 10n);
    const anaAgain = transfer(w, w.ana, w.caio, 480n);
    const anaOnceMore = transfer(w, w.ana, w.caio, 6n);
    const results = await batch([toBia, onToCaio, tooMuch, anaAgain, anaOnceMore]);

    expect(results.map((r) => r.code)).toEqual(['DONE', 'DONE', 'FAILED', 'DONE', 'FAILED']);
    // Bia received 500 - 5 and sent 480 + 10: 5 left, short of 10 + 10.
    expect(results[2]).toMatchObject({ outcome: { reason: 'INSUFFICIENT_BALANCE', feeCents: '0' } });
    expect(results[4]).toMatchObject({ outcome: { reason: 'INSUFFICIENT_BALANCE' } });
    expect(await balanceOf(w.ana.accountId)).toBe(1_000n - 510n - 490n);
    expect(await balanceOf(w.bia.accountId)).toBe(495n - 490n);
    expect(await balanceOf(w.caio.accountId)).toBe(475n + 475n);
    expect(await balanceOf(await tenantAccountId(w.tenantId, 'FEE_REVENUE'))).toBe(3n * 15n);
    expect((await writersOf([toBia, onToCaio, tooMuch, anaAgain, anaOnceMore].map((s) => s.tevId))).size).toBe(1);
    expect(await eventsOf(toBia.tevId)).toEqual([
      { type: 'tev.in.received', account_id: w.bia.accountId },
      { type: 'tev.out.succeeded', account_id: w.ana.accountId },
    ]);
    expect(await eventsOf(tooMuch.tevId)).toEqual([{ type: 'tev.out.failed', account_id: w.bia.accountId }]);
    await expectLedgerConsistent(w.tenantId);
  });

  test('requests of two tenants in one batch each post to their own tenant', async () => {
    const [w, v] = [await world(), await world()];
    const results = await batch([transfer(w, w.ana, w.bia, 100n), transfer(v, v.ana, v.caio, 200n), transfer(w, w.ana, w.caio, 300n)]);
    expect(results.map((r) => r.code)).toEqual(['DONE', 'DONE', 'DONE']);
    expect(await balanceOf(w.ana.accountId)).toBe(1_000n - 110n - 310n);
    expect(await balanceOf(v.caio.accountId)).toBe(195n);
    await expectLedgerConsistent(w.tenantId);
    await expectLedgerConsistent(v.tenantId);
  });
});

describe('what a request alone would answer as a retry or a conflict, it answers in a batch', () => {
  test('the same request twice in a batch moves money once; the same key with another request is refused', async () => {
    const w = await world();
    const first = transfer(w, w.ana, w.bia, 100n);
    const reused = { ...transfer(w, w.ana, w.bia, 200n), tevId: first.tevId, idempotencyKey: first.idempotencyKey };
    const results = await batch([first, first, reused]);
    expect(results[0]).toMatchObject({ code: 'DONE', outcome: { tevId: first.tevId, amountCents: '100' } });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await balanceOf(w.ana.accountId)).toBe(1_000n - 110n);
    await expectLedgerConsistent(w.tenantId);
  });

  test('a retry of a settled transfer answers its outcome; a deferred one is settled once', async () => {
    const w = await world();
    const settled = transfer(w, w.ana, w.bia, 100n);
    const deferred = transfer(w, w.ana, w.caio, 200n);
    expect((await settleTev(db.em(), config, settled, 'SUBMIT')).code).toBe('DONE');
    expect((await settleTev(db.em(), config, deferred, 'DEFER')).code).toBe('PROCESSING');
    const fresh = transfer(w, w.ana, w.bia, 300n);
    const results = await batch([settled, deferred, fresh]);
    expect(results.map((r) => r.code)).toEqual(['DONE', 'DONE', 'DONE']);
    expect(results[1]).toMatchObject({ outcome: { tevId: deferred.tevId, amountCents: '200' } });
    expect(await balanceOf(w.ana.accountId)).toBe(1_000n - 110n - 210n - 310n);
    expect(await balanceOf(w.caio.accountId)).toBe(195n);
    await expectLedgerConsistent(w.tenantId);
  });

  test('an externalRef the payer already used, before or earlier in the batch: EXTERNAL_REF_TAKEN', async () => {
    const w = await world();
    expect((await settleTev(db.em(), config, transfer(w, w.ana, w.bia, 100n, { externalRef: 'invoice-1' }), 'SUBMIT')).code).toBe('DONE');
    const results = await batch([
      transfer(w, w.ana, w.bia, 100n, { externalRef: 'invoice-1' }),
      transfer(w, w.ana, w.bia, 100n, { externalRef: 'invoice-2' }),
      transfer(w, w.ana, w.caio, 100n, { externalRef: 'invoice-2' }),
      // Another payer's references are its own.
      transfer(w, w.bia, w.caio, 50n, { externalRef: 'invoice-1' }),
    ]);
    expect(results.map((r) => r.code)).toEqual(['EXTERNAL_REF_TAKEN', 'DONE', 'EXTERNAL_REF_TAKEN', 'DONE']);
    expect(await balanceOf(w.ana.accountId)).toBe(1_000n - 2n * 110n);
    await expectLedgerConsistent(w.tenantId);
  });
});
