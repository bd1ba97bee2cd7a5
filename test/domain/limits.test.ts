/**
 * Transaction limits in the posting functions, in process: `settle_tev` and the Pix debit check each debit against its
 * account's limits under the account's lock and count it (`check_and_count_limits`, src/ledger/sql/posting.sql), and a
 * Pix payout's reversal or return gives it back. The time the periods are read at is set per transaction
 * (`banking.limits_clock`), so every boundary in America/Sao_Paulo is tested without waiting for it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../src/accounts/entities.ts';
import { setLimitPolicy } from '../../src/limits/policy.ts';
import type { LimitValues } from '../../src/limits/store.ts';
import { PixDebitQueue, type DebitOutcome } from '../../src/pix/payout-debits.ts';
import { debitPayout, payoutDebitOf, refundPayout, reversePayout, settlePayout } from '../../src/pix/payouts.ts';
import type { LimitChannel } from '../../src/shared/errors.ts';
import { settleTev, type Settlement } from '../../src/transfers/settlement.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { domainDatabase, fund, onboardedHolder, type HolderAccount } from './support/accounts.ts';
import { tevSubmission } from './support/tev.ts';

const db = domainDatabase();
const config = { TEV_MAX_AMOUNT_CENTS: 100_000_000n };

/** The limits the tests' tenants set for persons, on both channels unless a test says otherwise. */
const POLICY: LimitValues = { perTransaction: 5_000n, day: 8_000n, night: 1_000n, month: 12_000n };

interface World {
  tenantId: string;
  payer: HolderAccount;
  payee: HolderAccount;
}

async function world(policy: Partial<Record<LimitChannel, LimitValues>> = { PIX: POLICY, TEV: POLICY }): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant();
  for (const [channel, defaults] of Object.entries(policy) as [LimitChannel, LimitValues][]) {
    await em.fork().transactional((tx) => setLimitPolicy(tx, tenantId, 'PERSON', channel, { defaults, maximums: {} }));
  }
  const [payer, payee] = await Promise.all([onboardedHolder(em, tenantId, 'Maria Pagadora'), onboardedHolder(em, tenantId, 'João Recebedor')]);
  await fund(em, tenantId, payer.accountId, 1_000_000n);
  return { tenantId, payer, payee };
}

/** Runs `step` in a transaction whose limits read the clock at `time` (São Paulo time written with its offset). */
const at = <T>(time: string, step: (tx: EntityManager) => Promise<T>): Promise<T> =>
  db.em().transactional(async (tx) => {
    await tx.execute(`select set_config('banking.limits_clock', ?, true)`, [time]);
    return step(tx);
  });

const tev = (w: World, time: string, amountCents: bigint, overrides: Parameters<typeof tevSubmission>[4] = {}) =>
  at(time, (tx) => settleTev(tx, config, tevSubmission(w.tenantId, w.payer.accountId, { accountId: w.payee.accountId }, amountCents, overrides), 'SUBMIT'));

/** DONE, or the reason it failed. */
const outcome = (s: Settlement) => ('outcome' in s ? (s.outcome.reason ?? s.outcome.status) : s.code);

const JOAO = { ispb: '87654321', name: 'João Recebedor', document: '12345678909', institution: 'Outro Banco', branch: '0002', account: '99887766', accountType: 'CACC' };

async function pixDebit(w: World, amountCents: bigint, idempotencyKey: string = randomUUID()) {
  const account = await db.em().findOneOrFail(Account, { id: w.payer.accountId });
  return payoutDebitOf('test-pepper', {
    tenantId: w.tenantId,
    account,
    channel: 'PIX_OUT',
    amountCents,
    pixKey: 'joao@example.com',
    pixKeyType: 'EMAIL',
    beneficiary: JOAO,
    qr: null,
    description: 'Pix para João',
    idempotencyKey,
  });
}

const decided = (o: DebitOutcome) => {
  if (o.kind !== 'decided') throw new Error(`not decided: ${JSON.stringify(o)}`);
  return o;
};

async function pix(w: World, time: string, amountCents: bigint, idempotencyKey?: string) {
  const debit = await pixDebit(w, amountCents, idempotencyKey);
  const o = decided(await at(time, (tx) => debitPayout(tx, debit, 'ASK', null)));
  return { payoutId: debit.payoutId, result: o.opening.reason ?? o.opening.status, breach: o.limitBreach };
}

/** What the payer has used on a channel in the periods of `time`. */
async function used(w: World, channel: LimitChannel, time: string) {
  const [row] = await sql<{ period: string; period_used: string; month_used: string }>(
    `select period, period_used_cents::text as period_used, month_used_cents::text as month_used
       from limit_state($1, $2, 'PERSON', $3, $4::timestamptz)`,
    [w.tenantId, w.payer.accountId, channel, time],
  );
  return row;
}

const setNightStart = (w: World, hour: 20 | 22) =>
  sql(`insert into account_limit (account_id, tenant_id, night_start_hour) values ($1, $2, $3)
       on conflict (account_id) do update set night_start_hour = excluded.night_start_hour`, [w.payer.accountId, w.tenantId, hour]);

describe('the day and night periods, at their boundaries in America/Sao_Paulo', () => {
  test('TEV: 19:59:59 is day, 20:00 night until 05:59:59, 06:00 a new day; a refusal moves nothing and sends tev.out.failed', async () => {
    const w = await world();
    expect(outcome(await tev(w, '2030-03-12T19:59:59-03:00', 5_000n))).toBe('DONE');
    expect(await used(w, 'TEV', '2030-03-12T19:59:59-03:00')).toEqual({ period: 'DAY', period_used: '5000', month_used: '5000' });

    const balance = await balanceOf(w.payer.accountId);
    const refused = await tev(w, '2030-03-12T20:00:00-03:00', 1_001n);
    expect(outcome(refused)).toBe('LIMIT_EXCEEDED');
    expect(await balanceOf(w.payer.accountId)).toBe(balance);
    const tevId = 'outcome' in refused ? refused.outcome.tevId : '';
    expect(await sql(`select type, data->>'reason' as reason from event_outbox where data->>'tevTransferId' = $1`, [tevId])).toEqual([{ type: 'tev.out.failed', reason: 'LIMIT_EXCEEDED' }]);

    expect(outcome(await tev(w, '2030-03-12T20:00:00-03:00', 1_000n))).toBe('DONE');
    expect(outcome(await tev(w, '2030-03-13T05:59:59-03:00', 1n))).toBe('LIMIT_EXCEEDED');
    expect(await used(w, 'TEV', '2030-03-13T05:59:59-03:00')).toEqual({ period: 'NIGHT', period_used: '1000', month_used: '6000' });

    expect(outcome(await tev(w, '2030-03-13T06:00:00-03:00', 5_000n))).toBe('DONE');
    expect(await used(w, 'TEV', '2030-03-13T06:00:00-03:00')).toEqual({ period: 'DAY', period_used: '5000', month_used: '11000' });
  });

  test('PIX: the same boundaries; a refused payout is REJECTED with the limit it broke and what remained', async () => {
    const w = await world();
    expect((await pix(w, '2030-03-12T19:59:59-03:00', 4_000n)).result).toBe('PROCESSING');
    const refused = await pix(w, '2030-03-12T20:00:00-03:00', 1_001n);
    expect(refused).toMatchObject({ result: 'LIMIT_EXCEEDED', breach: { channel: 'PIX', period: 'NIGHT', limitCents: '1000', remainingCents: '1000' } });
    expect(await sql('select status, reason, movement_id from pix_payout where id = $1', [refused.payoutId])).toEqual([{ status: 'REJECTED', reason: 'LIMIT_EXCEEDED', movement_id: null }]);
    expect((await pix(w, '2030-03-12T23:30:00-03:00', 600n)).result).toBe('PROCESSING');
    expect(await pix(w, '2030-03-13T05:59:59-03:00', 401n)).toMatchObject({ result: 'LIMIT_EXCEEDED', breach: { period: 'NIGHT', remainingCents: '400' } });
    expect((await pix(w, '2030-03-13T06:00:00-03:00', 4_000n)).result).toBe('PROCESSING');
    expect(await used(w, 'PIX', '2030-03-13T06:00:00-03:00')).toEqual({ period: 'DAY', period_used: '4000', month_used: '8600' });
    // Pix and TEV are counted apart.
    expect(await used(w, 'TEV', '2030-03-13T06:00:00-03:00')).toEqual({ period: 'DAY', period_used: '0', month_used: '0' });
  });

  test('a night starting at 22:00: 21:59:59 is still day, 22:00 is night', async () => {
    const w = await world();
    await setNightStart(w, 22);
    expect(outcome(await tev(w, '2030-03-12T21:59:59-03:00', 2_000n))).toBe('DONE');
    expect(outcome(await tev(w, '2030-03-12T22:00:00-03:00', 1_001n))).toBe('LIMIT_EXCEEDED');
    expect((await pix(w, '2030-03-12T21:59:59-03:00', 2_000n)).result).toBe('PROCESSING');
    expect(await pix(w, '2030-03-12T22:00:00-03:00', 1_001n)).toMatchObject({ result: 'LIMIT_EXCEEDED', breach: { period: 'NIGHT' } });
    expect(await used(w, 'TEV', '2030-03-12T22:00:00-03:00')).toEqual({ period: 'NIGHT', period_used: '0', month_used: '2000' });
  });

  test("the month's turn: the last day's night counts in the new month from midnight, and the new month starts from zero", async () => {
    const w = await world({ TEV: { perTransaction: 5_000n, day: 8_000n, night: 5_000n, month: 6_000n } });
    expect(outcome(await tev(w, '2030-03-31T10:00:00-03:00', 5_000n))).toBe('DONE');
    const monthly = await tev(w, '2030-03-31T23:59:59-03:00', 1_001n);
    expect(outcome(monthly)).toBe('LIMIT_EXCEEDED');
    // Past midnight: the same night (of March 31st), a new month.
    expect(outcome(await tev(w, '2030-04-01T00:00:00-03:00', 5_000n))).toBe('DONE');
    expect(await used(w, 'TEV', '2030-04-01T00:00:00-03:00')).toEqual({ period: 'NIGHT', period_used: '5000', month_used: '5000' });
    expect(outcome(await tev(w, '2030-04-01T06:00:00-03:00', 1_001n))).toBe('LIMIT_EXCEEDED');
    expect(outcome(await tev(w, '2030-04-01T06:00:00-03:00', 1_000n))).toBe('DONE');
  });

  test('per transaction, at any hour', async () => {
    const w = await world();
    expect(outcome(await tev(w, '2030-03-12T10:00:00-03:00', 5_001n))).toBe('LIMIT_EXCEEDED');
    expect(await pix(w, '2030-03-12T10:00:00-03:00', 5_001n)).toMatchObject({ breach: { channel: 'PIX', period: 'TRANSACTION', limitCents: '5000', remainingCents: '5000' } });
    expect(await used(w, 'PIX', '2030-03-12T10:00:00-03:00')).toEqual({ period: 'DAY', period_used: '0', month_used: '0' });
  });

  test('a tenant with no policy for the holder type and channel limits nothing and counts nothing', async () => {
    const w = await world({});
    expect(outcome(await tev(w, '2030-03-12T23:00:00-03:00', 500_000n))).toBe('DONE');
    expect((await pix(w, '2030-03-12T23:00:00-03:00', 400_000n)).result).toBe('PROCESSING');
    expect(await sql('select * from account_limit_usage where account_id = $1', [w.payer.accountId])).toEqual([]);
  });
});

describe('counted once, and given back', () => {
  test('a retried TEV or Pix payment counts once', async () => {
    const w = await world();
    const idempotencyKey = randomUUID();
    const tevId = `t${randomUUID()}`;
    for (let i = 0; i < 3; i++) expect(outcome(await tev(w, '2030-03-12T10:00:00-03:00', 2_000n, { tevId, idempotencyKey }))).toBe('DONE');
    for (let i = 0; i < 3; i++) expect((await pix(w, '2030-03-12T10:00:00-03:00', 1_500n, idempotencyKey)).result).toBe('PROCESSING');
    expect(await used(w, 'TEV', '2030-03-12T10:00:00-03:00')).toMatchObject({ period_used: '2000' });
    expect(await used(w, 'PIX', '2030-03-12T10:00:00-03:00')).toMatchObject({ period_used: '1500' });
  });

  test('a TEV refused after its limits were counted (its key reused, its externalRef taken) leaves them as they were', async () => {
    const w = await world();
    const first = { tevId: `t${randomUUID()}`, idempotencyKey: randomUUID(), externalRef: `ref-${randomUUID()}` };
    expect(outcome(await tev(w, '2030-03-12T10:00:00-03:00', 2_000n, first))).toBe('DONE');
    expect(outcome(await tev(w, '2030-03-12T10:00:00-03:00', 2_500n, { tevId: first.tevId, idempotencyKey: first.idempotencyKey }))).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(outcome(await tev(w, '2030-03-12T10:00:00-03:00', 1_000n, { externalRef: first.externalRef }))).toBe('EXTERNAL_REF_TAKEN');
    expect(await used(w, 'TEV', '2030-03-12T10:00:00-03:00')).toMatchObject({ period_used: '2000' });
  });

  test('a failed or cancelled payout gives its amount back to the period it was counted in; a return gives back what returned', async () => {
    const w = await world();
    const day = '2030-03-12T10:00:00-03:00';
    const failed = await pix(w, day, 3_000n);
    const returned = await pix(w, day, 2_000n);
    const night = await pix(w, '2030-03-12T21:00:00-03:00', 800n);
    expect(await used(w, 'PIX', day)).toEqual({ period: 'DAY', period_used: '5000', month_used: '5800' });

    await reversePayout(db.em(), failed.payoutId, { state: 'FAILED', endToEndId: 'E12345678203003121300abcdefghijk', reason: 'Conta destino encerrada' });
    expect(await used(w, 'PIX', day)).toEqual({ period: 'DAY', period_used: '2000', month_used: '2800' });
    await reversePayout(db.em(), night.payoutId, { state: 'CANCELLED', endToEndId: 'E12345678203003121301abcdefghijk', reason: 'Pagamento cancelado pelo PSP do recebedor' });
    expect(await used(w, 'PIX', '2030-03-12T21:00:00-03:00')).toEqual({ period: 'NIGHT', period_used: '0', month_used: '2000' });

    await settlePayout(db.em(), returned.payoutId, { state: 'POSTED', endToEndId: 'E12345678203003121302abcdefghijk', settledAt: new Date().toISOString(), refund: null });
    await refundPayout(db.em(), returned.payoutId, { endToEndId: 'D12345678203003121305abcdefghijk', amountCents: '500', refundedAt: new Date().toISOString() });
    expect(await used(w, 'PIX', day)).toEqual({ period: 'DAY', period_used: '1500', month_used: '1500' });
    // What was given back may be sent again.
    expect((await pix(w, day, 5_000n)).result).toBe('PROCESSING');
    expect(await pix(w, day, 1_501n)).toMatchObject({ result: 'LIMIT_EXCEEDED', breach: { period: 'DAY', remainingCents: '1500' } });
  });

  test('a return after its period is over gives nothing back to the current one', async () => {
    const w = await world();
    const yesterday = await pix(w, '2030-03-12T10:00:00-03:00', 3_000n);
    expect((await pix(w, '2030-03-13T10:00:00-03:00', 1_000n)).result).toBe('PROCESSING');
    await reversePayout(db.em(), yesterday.payoutId, { state: 'FAILED', endToEndId: 'E12345678203003131300abcdefghijk', reason: 'Conta destino encerrada' });
    expect(await used(w, 'PIX', '2030-03-13T10:00:00-03:00')).toEqual({ period: 'DAY', period_used: '1000', month_used: '1000' });
  });
});

describe('trusted contacts: exempt from the night limit only', () => {
  /** A contact of the payer added a day before `trustedFrom` and trusted from then (null: still waiting). */
  const contact = (w: World, target: { pixKey: string } | { branch: string; account: string }, trustedFrom: string | null) =>
    sql(
      `insert into trusted_contact (id, tenant_id, account_id, kind, pix_key, pix_key_type, branch, account_number, created_at, trusts_at, trusted_from)
       values ($1, $2, $3, $4, $5, $6, $7, $8, '2030-03-01T10:00:00-03:00', '2030-03-02T10:00:00-03:00', $9)`,
      'pixKey' in target
        ? [randomUUID(), w.tenantId, w.payer.accountId, 'PIX_KEY', target.pixKey, 'EMAIL', null, null, trustedFrom]
        : [randomUUID(), w.tenantId, w.payer.accountId, 'ACCOUNT', null, null, target.branch, target.account, trustedFrom],
    );

  test('a Pix to a trusted key passes the night limit, held to the limits per transaction and month, and counts in the month only', async () => {
    const w = await world();
    await contact(w, { pixKey: 'joao@example.com' }, '2030-03-02T10:00:00-03:00');
    expect((await pix(w, '2030-03-12T23:00:00-03:00', 5_000n)).result).toBe('PROCESSING');
    expect((await pix(w, '2030-03-12T23:30:00-03:00', 5_000n)).result).toBe('PROCESSING');
    expect(await pix(w, '2030-03-12T23:45:00-03:00', 5_001n)).toMatchObject({ breach: { period: 'TRANSACTION' } });
    expect(await pix(w, '2030-03-13T01:00:00-03:00', 2_001n)).toMatchObject({ breach: { period: 'MONTH', remainingCents: '2000' } });
    expect(await used(w, 'PIX', '2030-03-13T01:00:00-03:00')).toEqual({ period: 'NIGHT', period_used: '0', month_used: '10000' });
    // By day the day limit holds it as any other payment.
    expect(await pix(w, '2030-03-13T10:00:00-03:00', 2_001n)).toMatchObject({ breach: { period: 'MONTH' } });
    expect((await pix(w, '2030-03-13T10:00:00-03:00', 2_000n)).result).toBe('PROCESSING');
    expect(await used(w, 'PIX', '2030-03-13T10:00:00-03:00')).toEqual({ period: 'DAY', period_used: '2000', month_used: '12000' });
  });

  test('a contact still waiting, or trusted only later, is not exempt', async () => {
    const w = await world();
    await contact(w, { pixKey: 'joao@example.com' }, null);
    expect(await pix(w, '2030-03-12T23:00:00-03:00', 1_001n)).toMatchObject({ breach: { period: 'NIGHT' } });
    const later = await world();
    await contact(later, { pixKey: 'joao@example.com' }, '2030-03-13T10:00:00-03:00');
    expect(await pix(later, '2030-03-12T23:00:00-03:00', 1_001n)).toMatchObject({ breach: { period: 'NIGHT' } });
    expect((await pix(later, '2030-03-13T23:00:00-03:00', 1_001n)).result).toBe('PROCESSING');
  });

  test('a TEV to a trusted branch and account passes the night limit; another destination does not', async () => {
    const w = await world();
    await contact(w, { branch: w.payee.agency, account: w.payee.number }, '2030-03-02T10:00:00-03:00');
    expect(outcome(await tev(w, '2030-03-12T22:00:00-03:00', 4_000n))).toBe('DONE');
    const other = await onboardedHolder(db.em(), w.tenantId, 'Ana Outra');
    const toOther = await at('2030-03-12T22:00:00-03:00', (tx) =>
      settleTev(tx, config, tevSubmission(w.tenantId, w.payer.accountId, { accountId: other.accountId }, 1_001n), 'SUBMIT'));
    expect(outcome(toOther)).toBe('LIMIT_EXCEEDED');
    expect(await used(w, 'TEV', '2030-03-12T22:00:00-03:00')).toEqual({ period: 'NIGHT', period_used: '0', month_used: '4000' });
  });
});

describe('parallel payments never pass a limit by one cent', () => {
  const THREE = { perTransaction: 1_000n, day: 3_000n, night: 3_000n, month: 1_000_000n };

  test('30 TEVs at once against a limit that allows 3: exactly 3 settle', async () => {
    const w = await world({ TEV: THREE });
    const settled = await Promise.all(
      Array.from({ length: 30 }, () => settleTev(db.em(), config, tevSubmission(w.tenantId, w.payer.accountId, { accountId: w.payee.accountId }, 1_000n), 'SUBMIT')),
    );
    expect(settled.map(outcome).filter((o) => o === 'DONE')).toHaveLength(3);
    expect(settled.map(outcome).filter((o) => o === 'LIMIT_EXCEEDED')).toHaveLength(27);
    expect(await balanceOf(w.payee.accountId)).toBe(3_000n);
  });

  test('30 Pix payments at once through the request path\'s batching queue: exactly 3 are debited', async () => {
    const w = await world({ PIX: THREE });
    const queue = new PixDebitQueue(db.em(), { PIX_BATCH_LANES: 4, PIX_BATCH_MAX: 16, TEV_RESPONSE_DEADLINE_MS: 30_000 });
    const debits = await Promise.all(Array.from({ length: 30 }, () => pixDebit(w, 1_000n)));
    const outcomes = await Promise.all(debits.map((debit) => queue.debit({ debit, approval: 'ASK', handOff: null })));
    const results = outcomes.map((o) => decided(o).opening.reason ?? decided(o).opening.status);
    expect(results.filter((r) => r === 'PROCESSING')).toHaveLength(3);
    expect(results.filter((r) => r === 'LIMIT_EXCEEDED')).toHaveLength(27);
    expect(await balanceOf(w.payer.accountId)).toBe(1_000_000n - 3_000n);
  });
});
