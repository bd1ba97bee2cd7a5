/**
 * Every event the platform writes, against its one definition (src/events/catalog.ts). Each producer runs in process
 * on the run's database as the api and the workflows call it: the TypeScript ones (an incoming Pix, a payout's
 * settlement, a charge's payment, refund and expiry) and the SQL posting functions that write their own events
 * (`settle_tev` alone and in its batch, `reverse_pix_payout`, `refund_pix_payout`), and a batch payout's steps. Then every row the case's tenant
 * has in event_outbox is parsed strictly with the definition of its type: a field the definition lacks, or one it
 * has that is missing, fails. The code's event types all have a definition, and each definition is written here.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { Account } from '../../src/accounts/entities.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/database.ts';
import { EVENT_DATA, EVENT_TYPES, type EventType } from '../../src/events/catalog.ts';
import { paymentContext, type PaymentContext } from '../../src/payments/context.ts';
import { runOccurrence } from '../../src/schedules/execution.ts';
import { schedulePayment } from '../../src/schedules/service.ts';
import { lazyTemporal } from '../../src/temporal/connection.ts';
import { payNextChunk, startBatch } from '../../src/batches/execution.ts';
import { recordBatch, recordCancellation } from '../../src/batches/service.ts';
import type { BatchItemRequest } from '../../src/batches/validation.ts';
import { createCharge, expireCharge } from '../../src/pix/charges.ts';
import { payCharge, refundCharge } from '../../src/pix/charge-settlement.ts';
import { pixEndToEndId } from '../../src/pix/end-to-end.ts';
import { receivePix } from '../../src/pix/incoming.ts';
import { debitPayout, payoutDebitOf, refundPayout, reversePayout, settlePayout } from '../../src/pix/payouts.ts';
import { newCuid } from '../../src/shared/ids.ts';
import { resolveTev, settleTev, settleTevBatch } from '../../src/transfers/settlement.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { sql } from '../support/db.ts';
import { newCnpj, newCpf } from '../support/fixtures.ts';
import { domainDatabase, fund, onboardedHolder, type HolderAccount } from './support/accounts.ts';
import { applyNotification, payoutReturned } from './support/notifications.ts';
import { tevSubmission } from './support/tev.ts';

const db = domainDatabase();
const config = { TEV_MAX_AMOUNT_CENTS: 1_000_000n };
const taskQueue = `test-${randomUUID()}`;

/** The payment use cases, for a scheduled payment's occurrence: their hand-offs go to a task queue no worker serves. */
let payments: PaymentContext;
beforeAll(async () => {
  const platform = loadConfig(
    { NODE_ENV: 'test', DATABASE_URL: process.env.TEST_DATABASE_URL, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: taskQueue },
    mkdtempSync(join(tmpdir(), 'events-domain-')),
  );
  payments = paymentContext({ config: platform, logger: pino({ level: 'silent' }), orm: await openDatabase(platform.DATABASE_URL, 4), temporal: lazyTemporal(platform) });
});
afterAll(async () => {
  await payments?.temporal.connection.close();
  await payments?.orm.close();
});

/** A moment as a São Paulo date and time of day, as a schedule is written. */
function saoPauloClock(at: Date): { date: string; time: string } {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((x) => [x.type, x.value]),
  );
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}:${p.second}` };
}

/** The event types the cases below wrote, for the check that every definition is written by one. */
const written = new Set<string>();

interface World {
  tenantId: string;
  payer: HolderAccount;
  payee: HolderAccount;
}

/** A tenant with a fee on every operation (so no fee is a default 0), a payer with R$ 1.000,00 and a payee. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ tevOut: 50n, tevIn: 20n, pixIn: 10n, pixOut: 100n });
  const [payer, payee] = await Promise.all([onboardedHolder(em, tenantId, 'Maria Pagadora'), onboardedHolder(em, tenantId, 'João Recebedor')]);
  await fund(em, tenantId, payer.accountId, 100_000n);
  return { tenantId, payer, payee };
}

interface OutboxRow {
  type: string;
  account_id: string;
  pix_account_id: string;
  data: Record<string, unknown>;
}

/**
 * The tenant's events, each parsed with its type's definition made strict; answers their types in the order written.
 * Also checks whom each event belongs to: the account's own Pix account, and the movement it names is the account's.
 */
async function expectEventsConform(tenantId: string): Promise<string[]> {
  const rows = await sql<OutboxRow>('select type, account_id, pix_account_id, data from event_outbox where tenant_id = $1 order by txid, seq', [tenantId]);
  const problems = rows.flatMap((row) => {
    const definition = EVENT_DATA[row.type as EventType];
    if (!definition) return [`${row.type}: no definition`];
    const parsed = definition.strict().safeParse(row.data);
    return parsed.success ? [] : parsed.error.issues.map((i) => `${row.type}: ${i.path.join('.') || '(data)'}: ${i.message} in ${JSON.stringify(row.data)}`);
  });
  expect(problems).toEqual([]);
  for (const row of rows) {
    const [account] = await sql('select pix_account_id from account where id = $1', [row.account_id]);
    expect(account).toEqual({ pix_account_id: row.pix_account_id });
    if (typeof row.data.movementId === 'string') {
      const [movement] = await sql('select account_id from movement where id = $1', [row.data.movementId]);
      expect({ type: row.type, account: movement?.account_id }).toEqual({ type: row.type, account: row.account_id });
    }
    written.add(row.type);
  }
  return rows.map((r) => r.type);
}

const payerParty = (document = newCpf()) => ({ name: 'Paula Pagadora', document, ispb: '12345678', institution: 'Banco Pagador', branch: '0001', account: '555666' });

describe('the events a case writes parse with their definitions', () => {
  test("incoming Pix: with the payer institution's end-to-end id and without (one made for its ISPB), from a CPF and a CNPJ", async () => {
    const w = await world();
    await receivePix(db.em(), { tenantId: w.tenantId, accountId: w.payee.accountId, amountCents: 2_000n, endToEndId: pixEndToEndId('12345678'), payer: payerParty(newCnpj()) });
    expect(await expectEventsConform(w.tenantId)).toEqual(['pix.in.received', 'pix.in.received']);
  });

  const tev = (w: World, amountCents: bigint, overrides: Partial<TevSubmission> = {}) =>
    tevSubmission(w.tenantId, w.payer.accountId, { accountId: w.payee.accountId }, amountCents, { tevId: newCuid(), ...overrides });

  test('TEV settled in the request: alone, in a batch, by branch and number, with and without description and externalRef', async () => {
    const w = await world();
    expect((await settleTev(db.em(), config, tev(w, 1_000n, { description: 'Aluguel', externalRef: 'order-1' }), 'SUBMIT')).code).toBe('DONE');
    const byNumber = tev(w, 500n, { destination: { branch: w.payee.agency, account: w.payee.number } });
    const batch = await settleTevBatch(db.em(), config, [byNumber, tev(w, 700n, { externalRef: 'order-2' })]);
    expect(batch.map((s) => s.code)).toEqual(['DONE', 'DONE']);
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(Array(3).fill(['tev.out.succeeded', 'tev.in.received']).flat());
  });

  test('TEV refused: a balance short of amount and fee; an uncertain one resolved DONE, and one failed by the sandbox', async () => {
    const w = await world();
    expect((await settleTev(db.em(), config, tev(w, 100_000n), 'SUBMIT')).code).toBe('FAILED');
    const [done, failed] = [tev(w, 1_097n), tev(w, 1_098n)];
    for (const s of [done, failed]) expect((await settleTev(db.em(), config, s, 'DEFER')).code).toBe('PROCESSING');
    expect(await resolveTev(db.em(), config, { submission: done, sandbox: null })).toMatchObject({ status: 'DONE' });
    expect(await resolveTev(db.em(), config, { submission: failed, sandbox: { delayMs: 0, outcome: 'FAILED' } })).toMatchObject({ status: 'FAILED' });
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['tev.out.failed', 'tev.out.succeeded', 'tev.in.received', 'tev.out.failed']);
  });

  /** A Pix payment of the payer to a key, debited as the payment endpoint debits it; answers the payout's id. */
  async function payout(w: World, amountCents: bigint, key: { pixKey: string; pixKeyType: 'EMAIL' | 'CPF' | 'CNPJ'; document: string }): Promise<string> {
    const account = await db.em().findOneOrFail(Account, { id: w.payer.accountId });
    const debit = payoutDebitOf('test-pepper', {
      tenantId: w.tenantId,
      account,
      channel: 'PIX_OUT',
      amountCents,
      pixKey: key.pixKey,
      pixKeyType: key.pixKeyType,
      beneficiary: { ispb: '87654321', name: 'Loja Recebedora', document: key.document, institution: 'Outro Banco', branch: '0002', account: '99887766', accountType: 'CACC' },
      qr: null,
      description: 'Pix para a loja',
      idempotencyKey: randomUUID(),
    });
    const outcome = await debitPayout(db.em(), debit, 'ASK', null);
    if (outcome.kind !== 'decided' || outcome.opening.status !== 'PROCESSING') throw new Error(`not debited: ${JSON.stringify(outcome)}`);
    return debit.payoutId;
  }
  const email = () => ({ pixKey: 'loja@example.com', pixKeyType: 'EMAIL' as const, document: newCpf() });
  const posted = () => ({ state: 'POSTED' as const, endToEndId: pixEndToEndId('87654321'), settledAt: new Date().toISOString(), refund: null });

  test('Pix payouts: settled (to a CPF, shown masked, and to a CNPJ key), failed, cancelled', async () => {
    const w = await world();
    const cnpj = newCnpj();
    const [toCpf, toCnpj, failed, cancelled] = [
      await payout(w, 1_000n, email()),
      await payout(w, 1_100n, { pixKey: cnpj, pixKeyType: 'CNPJ', document: cnpj }),
      await payout(w, 1_291n, email()),
      await payout(w, 1_292n, email()),
    ];
    await settlePayout(db.em(), toCpf, posted());
    await settlePayout(db.em(), toCnpj, posted());
    await reversePayout(db.em(), failed, { state: 'FAILED', endToEndId: pixEndToEndId('87654321'), reason: 'Conta do recebedor encerrada' });
    await reversePayout(db.em(), cancelled, { state: 'CANCELLED', endToEndId: pixEndToEndId('87654321'), reason: 'Cancelado pelo recebedor' });
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['pix.payout.succeeded', 'pix.payout.succeeded', 'pix.payout.failed', 'pix.payout.cancelled']);
  });

  test('Pix payouts returned: in part and then the rest, and one whose return comes before its settlement was seen', async () => {
    const w = await world();
    const [inParts, returnedFirst] = [await payout(w, 2_000n, email()), await payout(w, 1_500n, email())];
    await settlePayout(db.em(), inParts, posted());
    for (const amountCents of ['800', '1200']) {
      await refundPayout(db.em(), inParts, { endToEndId: `D${pixEndToEndId('87654321').slice(1)}`, amountCents, refundedAt: new Date().toISOString() });
    }
    const { endToEndId, settledAt } = posted();
    await applyNotification(db.em(), payoutReturned(returnedFirst, { endToEndId, settledAt, returnEndToEndId: `D${pixEndToEndId('87654321').slice(1)}`, amountCents: 1500n }));
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['pix.payout.succeeded', 'pix.payout.refunded', 'pix.payout.refunded', 'pix.payout.succeeded', 'pix.payout.refunded']);
  });

  test("charges: paid (with a tag, and without one by a provider's end-to-end id) and refunded, in part and in whole; one expired", async () => {
    const w = await world();
    const account = await db.em().findOneOrFail(Account, { id: w.payee.accountId });
    const charge = async (tag: string | null) =>
      (await createCharge(db.em(), taskQueue, account, 'Loja do João', 'https://pix.example.test', randomUUID(), { amountCents: 3_000n, expiresInSeconds: 3_600, tag })).charge;
    const [tagged, untagged, unpaid] = [await charge('order-8841'), await charge(null), await charge('order-8842')];
    await payCharge(db.em(), taskQueue, { tenantId: w.tenantId, txid: tagged.txid, payer: payerParty() });
    await payCharge(db.em(), taskQueue, { tenantId: w.tenantId, txid: untagged.txid, amountCents: 3_000n, payer: payerParty(newCnpj()), endToEndId: pixEndToEndId('12345678') });
    await refundCharge(db.em(), taskQueue, account, tagged.id, randomUUID(), 1_000n);
    await refundCharge(db.em(), taskQueue, account, untagged.id, randomUUID(), 3_000n);
    expect(await expireCharge(db.em(), unpaid.id)).toBe('EXPIRED');
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['pix.charge.paid', 'pix.charge.paid', 'pix.charge.refunded', 'pix.charge.refunded', 'pix.charge.expired']);
  });

  test('scheduled payments: an occurrence paid, and one refused for insufficient balance once its retries are spent', async () => {
    const w = await world();
    const account = await db.em().findOneOrFail(Account, { id: w.payer.accountId });
    const policy = { retries: 0, retryIntervalMs: 1_000, lateAfterMs: 60_000 };
    // Made "two minutes ago" (the clock is the caller's), due a minute ago: due now by the database's clock.
    const due = saoPauloClock(new Date(Date.now() - 60_000));
    for (const amountCents of [1_000n, 1_000_000n]) {
      const { schedule } = await schedulePayment(payments, db.em(), {
        account,
        origin: 'INTEGRATION_API',
        request: { target: { kind: 'TEV', branch: w.payee.agency, account: w.payee.number }, amountCents, description: null, rule: { ...due, recurrence: null } },
        idempotencyKey: randomUUID(),
        now: new Date(Date.now() - 120_000),
      });
      await runOccurrence(payments, w.tenantId, schedule.id, due.date, policy);
    }
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['tev.out.succeeded', 'tev.in.received', 'payment.scheduled.executed', 'tev.out.failed', 'payment.scheduled.failed']);
  });

  test('batch payouts: one paid to its end (a TEV and a Pix item), one cancelled before it started', async () => {
    const w = await world();
    const account = await db.em().findOneOrFail(Account, { id: w.payer.accountId });
    const directory = { resolveKey: async () => ({ ispb: '87654321', name: 'Loja Recebedora', document: newCpf(), institution: 'Outro Banco', branch: '0002', account: '99887766', accountType: 'CACC' }) };
    const batchConfig = {
      ...config,
      KEY_PEPPER: 'test-pepper',
      APPROVAL_TTL_MS: 60_000,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BATCH_CHUNK_SIZE: 100,
      BATCH_PIX_IN_FLIGHT: 10,
      BATCH_YIELD_CHUNK: 10,
      BATCH_YIELD_PIX_IN_FLIGHT: 20,
      BATCH_YIELD_MS: 50,
      PIX_NOTIFICATION_WAIT_MS: 15_000,
      PIX_QUERY_MAX_WAIT_MS: 600_000,
    };
    const items: BatchItemRequest[] = [
      { kind: 'TEV', externalRef: 'e-1', amountCents: 1_000n, description: null, branch: w.payee.agency, account: w.payee.number },
      { kind: 'PIX', externalRef: 'e-2', amountCents: 500n, description: 'Fornecedor', pixKey: 'loja@example.com', pixKeyType: 'EMAIL' },
    ];
    const paid = await recordBatch(db.em(), batchConfig, directory, { account, idempotencyKey: randomUUID(), items });
    expect(await startBatch(db.em(), paid.batchId)).toEqual({ kind: 'PAY' });
    expect(await payNextChunk(db.em(), batchConfig, paid.batchId, 100, 10)).toEqual({ paid: 2, processing: 1, finished: null });
    await settlePayout(db.em(), paid.items[1]!.payoutId!, posted());
    expect((await payNextChunk(db.em(), batchConfig, paid.batchId, 100, 10)).finished).toBe('FINISHED');
    const cancelled = await recordBatch(db.em(), batchConfig, directory, { account, idempotencyKey: randomUUID(), items });
    await recordCancellation(db.em(), batchConfig, account, cancelled.batchId);
    expect((await expectEventsConform(w.tenantId)).slice(1)).toEqual(['tev.out.succeeded', 'tev.in.received', 'pix.payout.succeeded', 'payment.batch.finished', 'payment.batch.finished']);
  });

  test('every definition was written by a case above', () => {
    expect([...written].sort()).toEqual([...EVENT_TYPES].sort());
  });
});

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f));

describe('every event type the code writes has a definition', () => {
  test('the SQL posting functions write only defined types', () => {
    const sqlFiles = filesUnder('src/ledger/sql').filter((f) => f.endsWith('.sql'));
    const writers = sqlFiles.filter((f) => /insert into event_outbox/i.test(readFileSync(f, 'utf8')));
    expect(writers.sort()).toEqual(['src/ledger/sql/return_pix_payout.sql', 'src/ledger/sql/settle_pix_payout.sql', 'src/ledger/sql/settle_tev.sql']);
    const types = writers.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/'([a-z]+\.[a-z]+\.[a-z]+)'/g)].map((m) => m[1]!));
    expect(types.length).toBeGreaterThan(0);
    expect(types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t))).toEqual([]);
  });

  test('TypeScript writes events only through enqueueEvents, whose events are typed by the catalog', () => {
    // Migrations hold the functions' first versions; src/ledger/sql replaces them.
    const sources = [...filesUnder('src'), ...filesUnder('activities'), ...filesUnder('workflows'), ...filesUnder('worker')].filter(
      (f) => f.endsWith('.ts') && !f.startsWith(join('src', 'persistence', 'migrations')),
    );
    expect(sources.filter((f) => /insert into event_outbox/i.test(readFileSync(f, 'utf8')))).toEqual([join('src', 'events', 'outbox.ts')]);
  });
});
