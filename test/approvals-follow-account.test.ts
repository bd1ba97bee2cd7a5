/**
 * Pending approval requests follow their account as it is now: a replaced approver's decision is refused and the new
 * approver decides; turning dual approval off cancels what is pending. Also when the decision races the change.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let connection: Connection;
let temporal: Client;
const tenants: string[] = [];
beforeAll(async () => {
  platform = await startPlatform();
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
}, 90_000);
afterAll(async () => {
  for (const t of tenants) await expectLedgerConsistent(t);
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

interface Account {
  tenantId: string;
  owner: Onboarded;
  approver: Onboarded;
  successor: Onboarded;
  payee: Onboarded;
}

/** An account under dual approval (approver), funded with R$ 100; successor and payee are other holders of its tenant. */
async function dualApprovalAccount(): Promise<Account> {
  const tenantId = await newTenant(platform);
  tenants.push(tenantId);
  const [owner, approver, successor, payee] = (await Promise.all([0, 1, 2, 3].map(() => onboarded(platform, tenantId)))) as [Onboarded, Onboarded, Onboarded, Onboarded];
  await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
  await fund(platform, tenantId, owner.account.id, 10_000);
  return { tenantId, owner, approver, successor, payee };
}

const payTev = (a: Account, amount: number) =>
  http('POST', `${platform.holderUrl}/accounts/${a.owner.account.id}/tev/payment`, {
    body: { accountNumber: a.payee.account.number, amount, pin: a.owner.pin },
    headers: { ...tenantHeaders(a.tenantId, a.owner.token), 'idempotency-key': randomUUID() },
  });
const holdTev = async (a: Account, amount: number): Promise<string> => {
  const res = await payTev(a, amount);
  expect(res.status).toBe(202);
  return res.body.approvalRequestId;
};
const holdPix = async (a: Account, amount: number): Promise<string> => {
  const res = await http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: a.owner.account.id, pin: a.owner.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
    headers: tenantHeaders(a.tenantId, a.owner.token),
  });
  expect(res.status).toBe(202);
  return res.body.approvalRequestId;
};
const decide = (a: Account, who: Onboarded, id: string, action: 'approve' | 'reject') =>
  http('POST', `${platform.holderUrl}/approvals/${id}/${action}`, { body: { pin: who.pin }, headers: tenantHeaders(a.tenantId, who.token) });
const read = (a: Account, who: Onboarded, id: string) => http('GET', `${platform.holderUrl}/approvals/${id}`, { headers: tenantHeaders(a.tenantId, who.token) });
const listed = async (a: Account, who: Onboarded, status: string): Promise<string[]> => {
  const res = await http('GET', `${platform.holderUrl}/approvals?status=${status}`, { headers: tenantHeaders(a.tenantId, who.token) });
  expect(res.status).toBe(200);
  return res.body.approvals.map((r: { approvalRequestId: string }) => r.approvalRequestId);
};
const replaceApprover = (a: Account, by: Onboarded) => adminOk(platform.env, 'account:dual-approval', '--account', a.owner.account.id, '--approver-document', by.document);
const turnOff = (a: Account) => adminOk(platform.env, 'account:dual-approval', '--account', a.owner.account.id, '--off');

/** The payments an approval ran: a TEV or a payout keyed by the request (none while it never executed). */
const paymentsOf = async (requestId: string) => {
  const key = `approval:${requestId}`;
  const [row] = await sql(
    `select (select count(*) from tev_transfer where idempotency_key = $1)::int + (select count(*) from pix_payout where idempotency_key = $1)::int as n`,
    [key],
  );
  return row.n as number;
};

/** The request's run has started (the hand-off took it): a decision sent while no worker runs then waits in it. */
const runStarted = (requestId: string) =>
  waitFor(async () => (await temporal.workflow.getHandle(`approval-${requestId}`).describe().catch(() => null))?.status.name, 20_000, 'the approval run');

/**
 * The approver's approval, sent before the operator's `change` and reaching the workflow after it: no worker runs
 * meanwhile, so the approval passes the api's checks and waits in Temporal while the change commits.
 */
async function approvalRacing(a: Account, requestId: string, change: () => Promise<unknown>) {
  await runStarted(requestId);
  await platform.stopWorker();
  let approval;
  try {
    approval = decide(a, a.approver, requestId, 'approve');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await change();
  } finally {
    await platform.startWorker();
  }
  return approval;
}

/** The request's approval run, once it has ended: its status and result. */
const endedRun = (requestId: string) =>
  waitFor(async () => {
    const handle = temporal.workflow.getHandle(`approval-${requestId}`);
    const { status } = await handle.describe();
    return status.name === 'RUNNING' ? undefined : { status: status.name, result: await handle.result() };
  }, 20_000, `approval-${requestId} to end`);

describe('a replaced approver', () => {
  test('is refused (403 NOT_APPROVER); the new approver sees the request, reads it and executes it', async () => {
    const a = await dualApprovalAccount();
    const before = { owner: await balanceOf(a.owner.account.id), payee: await balanceOf(a.payee.account.id) };
    const tev = await holdTev(a, 10);
    const pix = await holdPix(a, 3);

    const replaced = await replaceApprover(a, a.successor);
    expect(replaced).toEqual({ accountId: a.owner.account.id, dualApproval: { approverHolderId: a.successor.holder.id }, movedRequests: expect.arrayContaining([tev, pix]), cancelledRequests: [] });
    expect(replaced.movedRequests).toHaveLength(2);

    const refused = await decide(a, a.approver, tev, 'approve');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('NOT_APPROVER');
    expect((await decide(a, a.approver, pix, 'reject')).body.code).toBe('NOT_APPROVER');
    expect(await listed(a, a.approver, 'PENDING')).toEqual([]);
    expect((await read(a, a.approver, tev)).status).toBe(404);
    expect(await balanceOf(a.owner.account.id)).toBe(before.owner);

    expect(await listed(a, a.successor, 'PENDING')).toEqual(expect.arrayContaining([tev, pix]));
    expect((await read(a, a.successor, tev)).body).toMatchObject({ status: 'PENDING', amountCents: '1000' });
    const done = await decide(a, a.successor, tev, 'approve');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'EXECUTED', result: { tevId: expect.any(String), status: 'DONE', reason: null } });
    const rejected = await decide(a, a.successor, pix, 'reject');
    expect(rejected.body).toMatchObject({ status: 'REJECTED', result: null });

    expect(await balanceOf(a.owner.account.id)).toBe(before.owner - 1000n);
    expect(await balanceOf(a.payee.account.id)).toBe(before.payee + 1000n);
    expect((await read(a, a.owner, tev)).body.status).toBe('EXECUTED');
    const events = await sql(`select type from event_outbox where data->>'tevTransferId' = $1 order by type`, [done.body.result.tevId]);
    expect(events.map((e) => e.type)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    expect(await paymentsOf(pix)).toBe(0);
    // Decided since: the former approver is still refused as such.
    expect((await decide(a, a.approver, tev, 'approve')).body.code).toBe('NOT_APPROVER');
  }, 60_000);

  test('whose approval was sent before the replacement and reaches the workflow after it: refused, never executed', async () => {
    const a = await dualApprovalAccount();
    const before = await balanceOf(a.owner.account.id);
    const tev = await holdTev(a, 7);
    const refused = await approvalRacing(a, tev, () => replaceApprover(a, a.successor));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('NOT_APPROVER');
    expect(await balanceOf(a.owner.account.id)).toBe(before);
    expect(await paymentsOf(tev)).toBe(0);

    // The request kept waiting for its approver.
    expect((await read(a, a.successor, tev)).body.status).toBe('PENDING');
    const done = await decide(a, a.successor, tev, 'approve');
    expect(done.body).toMatchObject({ status: 'EXECUTED', result: { status: 'DONE' } });
    expect(await balanceOf(a.owner.account.id)).toBe(before - 700n);
    expect(await endedRun(tev)).toEqual({ status: 'COMPLETED', result: 'EXECUTED' });
  }, 90_000);
});

describe('turning dual approval off', () => {
  test('cancels the pending requests: nothing moves, their runs end, a later decision is refused, the requester sends again', async () => {
    const a = await dualApprovalAccount();
    const before = { owner: await balanceOf(a.owner.account.id), payee: await balanceOf(a.payee.account.id) };
    const tev = await holdTev(a, 10);
    const pix = await holdPix(a, 4);

    const off = await turnOff(a);
    expect(off).toEqual({ accountId: a.owner.account.id, dualApproval: null, movedRequests: [], cancelledRequests: expect.arrayContaining([tev, pix]) });
    expect(off.cancelledRequests).toHaveLength(2);

    for (const id of [tev, pix]) {
      const seen = await read(a, a.owner, id);
      expect(seen.body).toMatchObject({ status: 'CANCELLED', cancelReason: 'DUAL_APPROVAL_DISABLED', decidedAt: expect.stringMatching(/Z$/), result: null });
      expect(await endedRun(id)).toEqual({ status: 'COMPLETED', result: 'CANCELLED' });
      const late = await decide(a, a.approver, id, 'approve');
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('APPROVAL_ALREADY_DECIDED');
      expect(await paymentsOf(id)).toBe(0);
    }
    expect(await listed(a, a.approver, 'PENDING')).toEqual([]);
    expect(await listed(a, a.approver, 'CANCELLED')).toEqual(expect.arrayContaining([tev, pix]));
    expect(await balanceOf(a.owner.account.id)).toBe(before.owner);
    expect(await balanceOf(a.payee.account.id)).toBe(before.payee);

    expect((await payTev(a, 10)).status).toBe(200);
    expect(await balanceOf(a.payee.account.id)).toBe(before.payee + 1000n);
  }, 60_000);

  test('an approval sent before the switch-off that reaches the workflow after it is refused (409), nothing moves', async () => {
    const a = await dualApprovalAccount();
    const before = await balanceOf(a.owner.account.id);
    const tev = await holdTev(a, 9);
    const refused = await approvalRacing(a, tev, () => turnOff(a));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('APPROVAL_ALREADY_DECIDED');
    expect((await read(a, a.owner, tev)).body.status).toBe('CANCELLED');
    expect(await endedRun(tev)).toEqual({ status: 'COMPLETED', result: 'CANCELLED' });
    expect(await balanceOf(a.owner.account.id)).toBe(before);
    expect(await paymentsOf(tev)).toBe(0);
  }, 90_000);

  test('an account that lost its approver by any other path: the execution step itself cancels instead of paying', async () => {
    const a = await dualApprovalAccount();
    const before = await balanceOf(a.owner.account.id);
    const tev = await holdTev(a, 5);
    await sql('update account set approver_holder_id = null where id = $1', [a.owner.account.id]);
    const res = await decide(a, a.approver, tev, 'approve');
    expect(res.status).toBe(409);
    expect((await read(a, a.owner, tev)).body).toMatchObject({ status: 'CANCELLED', cancelReason: 'DUAL_APPROVAL_DISABLED' });
    expect(await endedRun(tev)).toEqual({ status: 'COMPLETED', result: 'CANCELLED' });
    expect(await balanceOf(a.owner.account.id)).toBe(before);
    expect(await paymentsOf(tev)).toBe(0);
  }, 60_000);
});
