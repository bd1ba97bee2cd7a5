import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createId } from '@paralleldrive/cuid2';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { coreAccountIdOf, fund, newTenant, onboarded, pixAccountIdOf, registeredWithAccount, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let alicePix: string;
/** Alice funded R$ 100.00 by Pix, then sent R$ 25.50 to Bob (fees: 1.50 to send, 0.50 to receive). */
let tevId: string;
beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--tev-out-cents', '150', '--tev-in-cents', '50');
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId, 'COMPANY')]);
  alicePix = await pixAccountIdOf(platform, tenantId, alice.document);
  await fund(platform, tenantId, alice.account.id, 10_000);
  const res = await pay(alice, bob, 25.5, { description: 'Aluguel de março' });
  if (res.status !== 200) throw new Error(`TEV failed: ${res.status} ${JSON.stringify(res.body)}`);
  tevId = res.body.tev.tevId;
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const ALL_TIME = { startDate: '2000-01-01', endDate: '2999-12-31' };

function pay(from: Onboarded, to: Onboarded, amount: number, extra: Record<string, unknown> = {}) {
  return http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, {
    body: { accountNumber: to.account.number, amount, pin: from.pin, ...extra },
    headers: tenantHeaders(from.tenantId, from.token),
  });
}

async function payOk(from: Onboarded, to: Onboarded, amount: number): Promise<string> {
  const res = await pay(from, to, amount);
  expect(res.status).toBe(200);
  return res.body.tev.tevId;
}

function statement(who: { tenantId: string; token: string }, accountId: string, query: Record<string, string | number> = ALL_TIME) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return http('GET', `${platform.holderUrl}/accounts/${accountId}/transactions?${qs}`, { headers: tenantHeaders(who.tenantId, who.token) });
}

const payout = (who: { tenantId: string; token: string }, accountId: string, payoutId: string) =>
  http('GET', `${platform.holderUrl}/accounts/${accountId}/payouts/${payoutId}`, { headers: tenantHeaders(who.tenantId, who.token) });

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAYMENT_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}-03:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CUID = /^[a-z][a-z0-9]{23}$/;

describe('GET /accounts/:accountId/transactions', () => {
  test('the sender sees the TEV as a debit with its fee, after the incoming Pix that funded it', async () => {
    const res = await statement(alice, alice.account.id);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ limit: 20, nextCursor: null, hasMore: false });
    const [sent, funded] = res.body.transactions;
    expect(res.body.transactions).toHaveLength(2);
    const [tev] = await sql('select end_to_end_id from tev_transfer where id = $1', [tevId]);

    expect(sent).toEqual({
      id: expect.stringMatching(UUID),
      amount: 25.5,
      credit: false,
      description: 'Aluguel de março',
      type: 'TEF',
      status: 'DONE',
      statusExternal: 'SUCCESS',
      createdAt: expect.stringMatching(ISO_UTC),
      balanceAfterTransaction: 73,
      endToEndId: tev.end_to_end_id,
      statementMetadata: {
        date: expect.stringMatching(ISO_UTC),
        endToEndId: tev.end_to_end_id,
        paymentDate: expect.stringMatching(PAYMENT_DATE),
        payer: { branch: alice.account.agency, account: alice.account.number },
        beneficiary: {
          ispb: '00000000',
          name: 'Padaria Pão Quente LTDA',
          branch: bob.account.agency,
          account: bob.account.number,
          document: bob.document,
          accountType: 'CACC',
          branchDigit: null,
          accountModel: 'INTERNAL',
        },
        pixAccountId: alicePix,
      },
      ledgerEntries: [
        { id: expect.stringMatching(CUID), kind: 'PRIMARY', amount: -25.5, balanceAfter: 74.5, createdAt: sent.createdAt },
        { id: expect.stringMatching(CUID), kind: 'FEE', amount: -1.5, balanceAfter: 73, createdAt: sent.createdAt },
      ],
    });

    expect(funded).toEqual({
      id: expect.stringMatching(UUID),
      amount: 100,
      credit: true,
      description: 'Pix recebido de Pagador Sandbox',
      type: 'PIX',
      status: 'DONE',
      statusExternal: 'SUCCESS',
      createdAt: expect.stringMatching(ISO_UTC),
      balanceAfterTransaction: 100,
      endToEndId: expect.any(String),
      statementMetadata: {
        date: expect.stringMatching(ISO_UTC),
        endToEndId: funded.endToEndId,
        paymentDate: expect.stringMatching(PAYMENT_DATE),
        payer: { ispb: '99999999', name: 'Pagador Sandbox', branch: '0001', account: '9999999', document: expect.stringMatching(/^\d{11}$/), institution: 'Banco Sandbox S.A.' },
        beneficiary: { branch: alice.account.agency, account: alice.account.number },
      },
      ledgerEntries: [{ id: expect.stringMatching(CUID), kind: 'PRIMARY', amount: 100, balanceAfter: 100, createdAt: funded.createdAt }],
    });
    expect(Date.parse(sent.createdAt)).toBeGreaterThanOrEqual(Date.parse(funded.createdAt));

    // Ids are the stored ones: the statement id of each movement and the ids of its ledger rows, in line order.
    const rows = await sql(
      `select m.statement_id, array_agg(e.id order by e.line) as entries
         from movement m join ledger_entry e on e.movement_id = m.id
        where m.account_id = $1 group by m.id, m.statement_id, m.created_at order by m.created_at desc`,
      [alice.account.id],
    );
    expect(rows.map((r) => [r.statement_id, r.entries])).toEqual(res.body.transactions.map((t: any) => [t.id, t.ledgerEntries.map((e: any) => e.id)]));
    await expectLedgerConsistent(tenantId);
  });

  test('the receiver sees the TEV as a credit net of the receive fee, with the sender as payer', async () => {
    const res = await statement(bob, bob.account.id);
    expect(res.status).toBe(200);
    const sent = (await statement(alice, alice.account.id)).body.transactions[0];
    expect(res.body.transactions).toEqual([
      {
        id: expect.stringMatching(UUID),
        amount: 25.5,
        credit: true,
        description: 'Aluguel de março',
        type: 'TEF',
        status: 'DONE',
        statusExternal: 'SUCCESS',
        createdAt: sent.createdAt,
        balanceAfterTransaction: 25,
        endToEndId: sent.endToEndId,
        statementMetadata: {
          date: sent.statementMetadata.date,
          endToEndId: sent.endToEndId,
          paymentDate: sent.statementMetadata.paymentDate,
          payer: { ispb: '00000000', name: 'Maria da Silva', branch: alice.account.agency, account: alice.account.number, document: alice.document },
          beneficiary: { branch: bob.account.agency, account: bob.account.number },
        },
        ledgerEntries: [
          { id: expect.stringMatching(CUID), kind: 'PRIMARY', amount: 25.5, balanceAfter: 25.5, createdAt: sent.createdAt },
          { id: expect.stringMatching(CUID), kind: 'FEE', amount: -0.5, balanceAfter: 25, createdAt: sent.createdAt },
        ],
      },
    ]);
    expect(res.body.transactions[0].id).not.toBe(sent.id);
    await expectLedgerConsistent(tenantId);
  });

  test('pagination with limit 2 walks every transaction exactly once, newest first, while transfers arrive', async () => {
    const [dave, erin] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
    await fund(platform, tenantId, dave.account.id, 100_000);
    for (const amount of [1.01, 1.02, 1.03, 1.04, 1.05]) await payOk(dave, erin, amount);
    const existing = await sql('select statement_id from movement where account_id = $1 order by created_at desc, id desc', [dave.account.id]);
    expect(existing).toHaveLength(6);

    const walked: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await statement(dave, dave.account.id, { ...ALL_TIME, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      const { transactions, pagination } = res.body;
      expect(transactions.length).toBeLessThanOrEqual(2);
      expect(pagination.limit).toBe(2);
      expect(pagination.hasMore).toBe(pagination.nextCursor !== null);
      walked.push(...transactions.map((t: any) => t.id));
      cursor = pagination.nextCursor ?? undefined;
      pages++;
      // Money moves both ways between page reads: newer than the walk, so never part of it.
      await payOk(dave, erin, 2);
      await payOk(erin, dave, 0.75);
    } while (cursor);

    expect(pages).toBe(3);
    expect(walked).toEqual(existing.map((r) => r.statement_id));
    const now = await statement(dave, dave.account.id, { ...ALL_TIME, limit: 100 });
    expect(now.body.pagination).toEqual({ limit: 100, nextCursor: null, hasMore: false });
    expect(now.body.transactions).toHaveLength(6 + 2 * pages);
    expect(now.body.transactions.slice(2 * pages).map((t: any) => t.id)).toEqual(walked);
    expect(now.body.transactions.slice(0, 2).map((t: any) => [t.credit, t.amount])).toEqual([[true, 0.75], [false, 2]]);
    const times = now.body.transactions.map((t: any) => Date.parse(t.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    await expectLedgerConsistent(tenantId);
  });

  test('the date range is inclusive and in UTC; a range in the past returns nothing', async () => {
    const all = (await statement(alice, alice.account.id)).body.transactions;
    for (const t of all) {
      const day = t.createdAt.slice(0, 10);
      const next = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
      const previous = new Date(Date.parse(day) - 86_400_000).toISOString().slice(0, 10);
      const ids = async (startDate: string, endDate: string) => (await statement(alice, alice.account.id, { startDate, endDate })).body.transactions.map((x: any) => x.id);
      expect(await ids(day, day)).toContain(t.id);
      expect(await ids(previous, day)).toContain(t.id);
      expect(await ids(next, next)).not.toContain(t.id);
      expect(await ids(previous, previous)).not.toContain(t.id);
    }
    const past = await statement(alice, alice.account.id, { startDate: '2020-01-01', endDate: '2024-02-29' });
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ transactions: [], pagination: { limit: 20, nextCursor: null, hasMore: false } });
    await expectLedgerConsistent(tenantId);
  });

  const forged = (payload: unknown) => `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${'A'.repeat(43)}`;
  test.each([
    ['missing startDate', { endDate: '2026-01-31' }, 'query.startDate'],
    ['missing endDate', { startDate: '2026-01-01' }, 'query.endDate'],
    ['a date that does not exist', { startDate: '2026-02-30', endDate: '2026-03-01' }, 'query.startDate'],
    ['a day-first date', { startDate: '01/02/2026', endDate: '2026-03-01' }, 'query.startDate'],
    ['a date with a time', { startDate: '2026-01-01', endDate: '2026-01-31T00:00:00Z' }, 'query.endDate'],
    ['endDate before startDate', { startDate: '2026-02-01', endDate: '2026-01-31' }, 'query.endDate'],
    ['limit 0', { ...ALL_TIME, limit: '0' }, 'query.limit'],
    ['limit 101', { ...ALL_TIME, limit: '101' }, 'query.limit'],
    ['limit -1', { ...ALL_TIME, limit: '-1' }, 'query.limit'],
    ['limit abc', { ...ALL_TIME, limit: 'abc' }, 'query.limit'],
    ['limit 2.5', { ...ALL_TIME, limit: '2.5' }, 'query.limit'],
    ['a cursor that is not one', { ...ALL_TIME, cursor: 'garbage' }, 'query.cursor'],
    ['a forged cursor', { ...ALL_TIME, cursor: forged({ at: '2026-01-01T00:00:00.000000Z', id: createId() }) }, 'query.cursor'],
    ['an empty cursor', { ...ALL_TIME, cursor: '' }, 'query.cursor'],
  ])('%s: 400 VALIDATION_ERROR', async (_case, query, path) => {
    const res = await statement(alice, alice.account.id, query);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: any) => d.path)).toContain(path);
  });

  test("a cursor changed in any way, or taken from another account's statement, is 400", async () => {
    const first = await statement(alice, alice.account.id, { ...ALL_TIME, limit: 1 });
    const cursor: string = first.body.pagination.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const [body, signature] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const edited = Buffer.from(JSON.stringify({ ...payload, at: payload.at.replace(/^\d{4}/, '2999') })).toString('base64url');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [`${edited}.${signature}`, flip(cursor, 3), flip(cursor, cursor.length - 2), `${cursor}x`, body]) {
      const res = await statement(alice, alice.account.id, { ...ALL_TIME, limit: 1, cursor: bad });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ path: 'query.cursor', message: expect.any(String) }]);
    }
    const elsewhere = await statement(bob, bob.account.id, { ...ALL_TIME, cursor });
    expect(elsewhere.status).toBe(400);
    const next = await statement(alice, alice.account.id, { ...ALL_TIME, limit: 1, cursor });
    expect(next.status).toBe(200);
    expect(next.body.transactions.map((t: any) => t.credit)).toEqual([true]);
  });

  test("another holder's or another tenant's account is 404; a holder before KYC reads its own statement", async () => {
    expect((await statement(alice, bob.account.id)).status).toBe(404);
    expect((await statement(alice, randomUUID())).status).toBe(404);
    const outsider = await onboarded(platform, await newTenant(platform));
    expect((await statement(alice, outsider.account.id)).status).toBe(404);
    const stranger = await statement(outsider, alice.account.id);
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe('NOT_FOUND');
    expect((await statement({ tenantId, token: outsider.token }, alice.account.id)).status).toBe(401);
    expect((await http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/transactions?startDate=2026-01-01&endDate=2026-01-02`, { headers: tenantHeaders(tenantId) })).status).toBe(401);
    expect((await statement(alice, 'not-a-uuid')).status).toBe(400);

    const newcomer = await registeredWithAccount(platform, tenantId);
    const own = await statement(newcomer, newcomer.accountId);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ transactions: [], pagination: { limit: 20, nextCursor: null, hasMore: false } });
  });
});

describe('GET /accounts/:accountId/payouts/:payoutId', () => {
  test('a settled TEV, read by the sender with its tevId: the debit movement, entries in cents on the internal account id', async () => {
    const aliceCore = await coreAccountIdOf(platform, tenantId, alice.document);
    expect(aliceCore).toMatch(CUID);
    const res = await payout(alice, alice.account.id, tevId);
    expect(res.status).toBe(200);
    const [tev] = await sql('select source_movement_id, end_to_end_id from tev_transfer where id = $1', [tevId]);
    const sent = (await statement(alice, alice.account.id)).body.transactions[0];
    expect(res.body).toEqual({
      id: tev.source_movement_id,
      type: 'DEBIT',
      status: 'POSTED',
      source: 'TEF_OUT',
      description: 'Aluguel de março',
      externalRef: null,
      feeAmount: '150',
      reversesMovementId: null,
      createdAt: sent.createdAt,
      entries: [
        { id: sent.ledgerEntries[0].id, accountId: aliceCore, amount: '-2550', balanceAfter: '7450', kind: 'PRIMARY', createdAt: sent.createdAt },
        { id: sent.ledgerEntries[1].id, accountId: aliceCore, amount: '-150', balanceAfter: '7300', kind: 'FEE', createdAt: sent.createdAt },
      ],
      metadata: {
        date: sent.statementMetadata.date,
        endToEndId: tev.end_to_end_id,
        paymentDate: expect.stringMatching(PAYMENT_DATE),
        payer: { branch: alice.account.agency, account: alice.account.number },
        beneficiary: { ispb: '00000000', name: 'Padaria Pão Quente LTDA', branch: bob.account.agency, account: bob.account.number, document: bob.document, accountType: 'CACC', branchDigit: null, accountModel: 'INTERNAL' },
      },
    });
    await expectLedgerConsistent(tenantId);
  });

  test('the destination side, other holders and other tenants get 404; a malformed payoutId is 400', async () => {
    expect((await payout(bob, bob.account.id, tevId)).status).toBe(404);
    expect((await payout(alice, alice.account.id, createId())).status).toBe(404);
    expect((await payout(bob, alice.account.id, tevId)).status).toBe(404);
    const carol = await onboarded(platform, tenantId);
    expect((await payout(carol, carol.account.id, tevId)).status).toBe(404);
    const outsider = await onboarded(platform, await newTenant(platform));
    expect((await payout(outsider, outsider.account.id, tevId)).status).toBe(404);
    expect((await payout(outsider, alice.account.id, tevId)).status).toBe(404);
    const malformed = await payout(alice, alice.account.id, 'NOT-A-CUID');
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
  });

  test('a refused TEV is FAILED with no entries, and leaves no statement transaction', async () => {
    const before = (await statement(alice, alice.account.id)).body.transactions;
    const res = await pay(alice, bob, 5_000);
    expect(res.status).toBe(422);
    const failed = await payout(alice, alice.account.id, res.body.tev.tevId);
    expect(failed.status).toBe(200);
    expect(failed.body).toEqual({
      id: res.body.tev.tevId,
      type: 'DEBIT',
      status: 'FAILED',
      source: 'TEF_OUT',
      description: 'Transferência para Padaria Pão Quente LTDA',
      externalRef: null,
      feeAmount: null,
      reversesMovementId: null,
      createdAt: expect.stringMatching(ISO_UTC),
      entries: [],
      metadata: {
        date: failed.body.createdAt,
        endToEndId: null,
        payer: { branch: alice.account.agency, account: alice.account.number },
        beneficiary: { ispb: '00000000', name: 'Padaria Pão Quente LTDA', branch: bob.account.agency, account: bob.account.number, document: bob.document, accountType: 'CACC', branchDigit: null, accountModel: 'INTERNAL' },
      },
    });
    expect((await statement(alice, alice.account.id)).body.transactions).toEqual(before);
    await expectLedgerConsistent(tenantId);
  });

  test('a TEV whose outcome is not known yet (sandbox ,97) is PROCESSING; once its workflow settles it, the payout is POSTED', async () => {
    const [sender, receiver] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
    await fund(platform, tenantId, sender.account.id, 1_000);
    await platform.stopWorker();
    let pending;
    try {
      const res = await pay(sender, receiver, 3.97);
      expect(res.status).toBe(502);
      pending = res.body.tev.tevId;
      const processing = await payout(sender, sender.account.id, pending);
      expect(processing.body).toMatchObject({ id: pending, status: 'PROCESSING', source: 'TEF_OUT', feeAmount: null, entries: [], metadata: { endToEndId: null } });
      expect(processing.body.metadata.paymentDate).toBeUndefined();
    } finally {
      await platform.startWorker();
    }
    const posted = await waitFor(async () => {
      const r = await payout(sender, sender.account.id, pending!);
      return r.body.status === 'POSTED' ? r.body : undefined;
    }, 30_000, 'settlement');
    expect(posted).toMatchObject({ type: 'DEBIT', feeAmount: '150', entries: [{ amount: '-397', balanceAfter: '603', kind: 'PRIMARY' }, { amount: '-150', balanceAfter: '453', kind: 'FEE' }] });
    expect(posted.id).not.toBe(pending);
    expect((await statement(sender, sender.account.id)).body.transactions[0]).toMatchObject({ credit: false, amount: 3.97, balanceAfterTransaction: 4.53 });
    await expectLedgerConsistent(tenantId);
  }, 90_000);
});
