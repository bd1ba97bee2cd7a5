import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { admin, adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let owner: Onboarded;
let approver: Onboarded;
let payee: Onboarded;
let stranger: Onboarded;
let ownerKey: string;
beforeAll(async () => {
  // Requests expire after 8 s here (24 h by default): long enough for a worker restart under the full suite's load.
  platform = await startPlatform({ APPROVAL_TTL_MS: '8000', SANDBOX_PIX_SETTLE_MS: '300' });
  tenantId = await newTenant(platform);
  [owner, approver, payee, stranger] = (await Promise.all([0, 1, 2, 3].map(() => onboarded(platform, tenantId)))) as [Onboarded, Onboarded, Onboarded, Onboarded];
  ownerKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, owner.document));
  const on = await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
  expect(on).toEqual({ accountId: owner.account.id, dualApproval: { approverHolderId: approver.holder.id }, movedRequests: [], cancelledRequests: [] });
  await fund(platform, tenantId, owner.account.id, 100_000);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const payFromOwner = (amount: number, key = randomUUID()) =>
  http('POST', `${platform.holderUrl}/accounts/${owner.account.id}/tev/payment`, {
    body: { accountNumber: payee.account.number, amount, pin: owner.pin },
    headers: { ...tenantHeaders(tenantId, owner.token), 'idempotency-key': key },
  });
const decide = (who: Onboarded, id: string, action: 'approve' | 'reject', pin = who.pin) =>
  http('POST', `${platform.holderUrl}/approvals/${id}/${action}`, { body: { pin }, headers: tenantHeaders(tenantId, who.token) });
const read = (who: Onboarded, id: string) => http('GET', `${platform.holderUrl}/approvals/${id}`, { headers: tenantHeaders(tenantId, who.token) });

describe('dual approval', () => {
  test('a payment is held (202, nothing moves); approval executes it once through the TEV path', async () => {
    const before = await balanceOf(owner.account.id);
    const key = randomUUID();
    const held = await payFromOwner(10, key);
    expect(held.status).toBe(202);
    expect(held.body).toEqual({ approvalRequestId: expect.any(String), status: 'PENDING', expiresAt: expect.stringMatching(/Z$/) });
    expect(await balanceOf(owner.account.id)).toBe(before);
    const again = await payFromOwner(10, key);
    expect(again.body.approvalRequestId).toBe(held.body.approvalRequestId);
    expect((await payFromOwner(11, key)).status).toBe(409);

    const pending = await http('GET', `${platform.holderUrl}/approvals?status=PENDING`, { headers: tenantHeaders(tenantId, approver.token) });
    expect(pending.body.approvals.map((a: any) => a.approvalRequestId)).toContain(held.body.approvalRequestId);
    expect((await read(owner, held.body.approvalRequestId)).body.status).toBe('PENDING');

    const done = await decide(approver, held.body.approvalRequestId, 'approve');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'EXECUTED', amountCents: '1000', result: { tevId: expect.any(String), status: 'DONE', reason: null } });
    expect(await balanceOf(owner.account.id)).toBe(before - 1000n);
    const evs = await sql(`select type from event_outbox where data->>'tevTransferId' = $1 order by type`, [done.body.result.tevId]);
    expect(evs.map((e) => e.type)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    const [tev] = await sql('select origin from tev_transfer where id = $1', [done.body.result.tevId]);
    expect(tev.origin).toBe('APPROVAL');

    const second = await decide(approver, held.body.approvalRequestId, 'approve');
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('APPROVAL_ALREADY_DECIDED');
    expect(await balanceOf(owner.account.id)).toBe(before - 1000n);
  });

  test('the integration API holds payments of the account too', async () => {
    const res = await http('POST', `${platform.apiUrl}/v1/tev`, {
      body: { destinationBranch: '1', destinationAccount: payee.account.number, amountCents: '5' },
      headers: { authorization: `Bearer ${ownerKey}`, 'idempotency-key': randomUUID() },
    });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('PENDING');
  });

  test('rejection ends REJECTED and nothing moves', async () => {
    const before = await balanceOf(owner.account.id);
    const held = await payFromOwner(3);
    const res = await decide(approver, held.body.approvalRequestId, 'reject');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'REJECTED', result: null });
    expect(await balanceOf(owner.account.id)).toBe(before);
  });

  test('only the approver decides: the requester is 403, an unrelated holder 404, a wrong PIN 403', async () => {
    const held = await payFromOwner(2);
    expect((await decide(owner, held.body.approvalRequestId, 'approve')).status).toBe(403);
    expect((await decide(stranger, held.body.approvalRequestId, 'approve')).status).toBe(404);
    expect((await read(stranger, held.body.approvalRequestId)).status).toBe(404);
    const wrongPin = await decide(approver, held.body.approvalRequestId, 'approve', '9517');
    expect(wrongPin.status).toBe(403);
    expect(wrongPin.body.code).toBe('INVALID_PIN');
    expect((await read(approver, held.body.approvalRequestId)).body.status).toBe('PENDING');
  });

  test('two approvals in parallel execute the payment once', async () => {
    const before = await balanceOf(owner.account.id);
    const held = await payFromOwner(7);
    const results = await Promise.all([decide(approver, held.body.approvalRequestId, 'approve'), decide(approver, held.body.approvalRequestId, 'approve')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await balanceOf(owner.account.id)).toBe(before - 700n);
  });

  test('balance spent between request and approval: FAILED with the reason, nothing moves', async () => {
    const t = await newTenant(platform);
    const [o, a, p] = await Promise.all([onboarded(platform, t), onboarded(platform, t), onboarded(platform, t)]);
    await adminOk(platform.env, 'account:dual-approval', '--account', o.account.id, '--approver-document', a.document);
    await fund(platform, t, o.account.id, 1000);
    const hold = (amount: number) =>
      http('POST', `${platform.holderUrl}/accounts/${o.account.id}/tev/payment`, { body: { accountNumber: p.account.number, amount, pin: o.pin }, headers: tenantHeaders(t, o.token) });
    const approve = (id: string) => http('POST', `${platform.holderUrl}/approvals/${id}/approve`, { body: { pin: a.pin }, headers: tenantHeaders(t, a.token) });
    const [held, spend] = [await hold(8), await hold(5)];
    expect((await approve(spend.body.approvalRequestId)).body.status).toBe('EXECUTED');
    const res = await approve(held.body.approvalRequestId);
    expect(res.body).toMatchObject({ status: 'FAILED', result: { status: 'FAILED', reason: 'INSUFFICIENT_BALANCE' } });
    expect(await balanceOf(o.account.id)).toBe(500n);
    await expectLedgerConsistent(t);
  });

  test('an unanswered request expires; approving it afterwards is 409', async () => {
    const held = await payFromOwner(1);
    const expired = await waitFor(async () => ((await read(owner, held.body.approvalRequestId)).body.status === 'EXPIRED' ? true : undefined), 20_000, 'expiry');
    expect(expired).toBe(true);
    const late = await decide(approver, held.body.approvalRequestId, 'approve');
    expect(late.status).toBe(409);
  });

  test('a worker restart while the request waits loses nothing; operators find the run by account and request', async () => {
    const before = await balanceOf(owner.account.id);
    await platform.stopWorker();
    let held;
    try {
      held = await payFromOwner(4);
      expect(held.status).toBe(202);
    } finally {
      await platform.startWorker();
    }
    const res = await decide(approver, held.body.approvalRequestId, 'approve');
    expect(res.body.status).toBe('EXECUTED');
    expect(await balanceOf(owner.account.id)).toBe(before - 400n);
    const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    try {
      const runs = [];
      for await (const w of new Client({ connection }).workflow.list({ query: `ApprovalRequestId = "${held.body.approvalRequestId}" AND AccountId = "${owner.account.id}"` })) runs.push(w.workflowId);
      expect(runs).toEqual([`approval-${held.body.approvalRequestId}`]);
    } finally {
      await connection.close();
    }
  }, 90_000);

  test('a Pix payment is held too; approval debits it and the payout settles on its own', async () => {
    const before = await balanceOf(owner.account.id);
    const pix = (amount: number) =>
      http('POST', `${platform.holderUrl}/pix/payment`, {
        body: { accountId: owner.account.id, pin: owner.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
        headers: tenantHeaders(tenantId, owner.token),
      });
    const held = await pix(12);
    expect(held.status).toBe(202);
    expect(held.body).toEqual({ approvalRequestId: expect.any(String), status: 'PENDING', expiresAt: expect.any(String) });
    expect(await balanceOf(owner.account.id)).toBe(before);
    expect((await read(approver, held.body.approvalRequestId)).body).toMatchObject({ kind: 'PIX', amountCents: '1200', destination: { pixKey: 'loja@example.com', pixKeyType: 'EMAIL' } });
    const done = await decide(approver, held.body.approvalRequestId, 'approve');
    expect(done.body).toMatchObject({ status: 'EXECUTED', result: { payoutId: expect.any(String), status: 'PROCESSING', reason: null } });
    expect(await balanceOf(owner.account.id)).toBe(before - 1200n);
    const payout = await waitFor(async () => {
      const r = await http('GET', `${platform.holderUrl}/accounts/${owner.account.id}/payouts/${done.body.result.payoutId}`, { headers: tenantHeaders(tenantId, owner.token) });
      return r.body.status === 'POSTED' ? r.body : undefined;
    }, 20_000, 'settlement');
    expect(payout.source).toBe('PIX_OUT');
  });

  test('operator command validation', async () => {
    const self = await admin(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', owner.document);
    expect(self.err.code).toBe('INVALID_APPROVER');
    const none = await admin(platform.env, 'account:dual-approval', '--account', owner.account.id);
    expect(none.err.code).toBe('USAGE_ERROR');
    const foreign = await onboarded(platform, await newTenant(platform));
    expect((await admin(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', foreign.document)).err.code).toBe('NOT_FOUND');
  });
});
