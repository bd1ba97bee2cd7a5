import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

/**
 * The money rules of a TEV that outside probes found broken: a destination that does not exist, an account-level
 * receive fee, and a settlement that raises an error. Each answers a definite result, moves nothing it should not,
 * and starts no workflow.
 */

let platform: Platform;
let temporal: Client;
let connection: Connection;
const tenants: string[] = [];

beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_TEV_RESOLVE_MS: '300' });
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
}, 90_000);
afterAll(async () => {
  for (const t of tenants) await expectLedgerConsistent(t);
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

interface Party extends Onboarded {
  pix: string;
  key: string;
}

async function tenantWith(count: number): Promise<{ tenantId: string; parties: Party[] }> {
  const tenantId = await newTenant(platform);
  tenants.push(tenantId);
  const parties = await Promise.all(
    Array.from({ length: count }, async () => {
      const holder = await onboarded(platform, tenantId);
      const pix = await pixAccountIdOf(platform, tenantId, holder.document);
      return { ...holder, pix, key: await apiKey(platform, tenantId, pix) };
    }),
  );
  return { tenantId, parties };
}

const apiTev = (from: Party, body: Record<string, unknown>, idempotencyKey: string = randomUUID()) =>
  http('POST', `${platform.apiUrl}/v1/tev`, { body, headers: { authorization: `Bearer ${from.key}`, 'idempotency-key': idempotencyKey } });
const holderTev = (from: Party, body: Record<string, unknown>, idempotencyKey: string = randomUUID()) =>
  http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, {
    body: { pin: from.pin, ...body },
    headers: { ...tenantHeaders(from.tenantId, from.token), 'idempotency-key': idempotencyKey },
  });
const revenueOf = async (tenantId: string) =>
  BigInt((await sql(`select balance_cents from account where tenant_id = $1 and kind = 'FEE_REVENUE'`, [tenantId]))[0].balance_cents);

/** What a refused request must not have left behind: a transfer record, a hand-off row, or a resolution workflow. */
async function expectNothingRecorded(tenantId: string) {
  expect(await sql('select id from tev_transfer where tenant_id = $1', [tenantId])).toEqual([]);
  expect(await sql(`select key from workflow_start where workflow_type = 'tevWorkflow' and args::text like $1`, [`%${tenantId}%`])).toEqual([]);
  const runs = [];
  for await (const run of temporal.workflow.list({ query: `WorkflowType = "tevWorkflow" AND TenantId = "${tenantId}"` })) runs.push(run.workflowId);
  expect(runs).toEqual([]);
}

describe('a TEV to a destination that does not exist', () => {
  test('unknown branch, unknown account, another tenant\'s account, a closed account: 400 DESTINATION_NOT_FOUND on both hosts, nothing moved, no workflow', async () => {
    const { tenantId, parties } = await tenantWith(3);
    const [payer, closed, rejectedOwner] = parties as [Party, Party, Party];
    const { parties: [stranger] } = await tenantWith(1);
    await fund(platform, tenantId, payer.account.id, 10_000);
    // A closed account: its holder CLOSED; and an account REJECTED at onboarding.
    await sql(`update holder set status = 'CLOSED' where id = (select holder_id from account where id = $1)`, [closed.account.id]);
    await sql(`update account set status = 'REJECTED' where id = $1`, [rejectedOwner.account.id]);

    const integrationCases = [
      { destinationBranch: '0009', destinationAccount: closed.account.number },
      { destinationBranch: '0001', destinationAccount: '999999' },
      { destinationBranch: stranger!.account.agency, destinationAccount: stranger!.account.number },
      { destinationBranch: closed.account.agency, destinationAccount: closed.account.number },
      { destinationBranch: rejectedOwner.account.agency, destinationAccount: rejectedOwner.account.number },
    ];
    for (const destination of integrationCases) {
      const res = await apiTev(payer, { ...destination, amountCents: '10' });
      expect([res.status, res.body.code, JSON.stringify(destination)]).toEqual([400, 'DESTINATION_NOT_FOUND', JSON.stringify(destination)]);
    }
    for (const accountNumber of ['999999', stranger!.account.number, closed.account.number, rejectedOwner.account.number]) {
      const res = await holderTev(payer, { accountNumber, amount: 0.1 });
      expect([res.status, res.body.code, accountNumber]).toEqual([400, 'DESTINATION_NOT_FOUND', accountNumber]);
    }
    // A retry under the same key answers the same, and so does a sandbox ,97 amount (which would otherwise be recorded).
    const key = randomUUID();
    for (const amountCents of ['10', '10', '197']) {
      const res = await apiTev(payer, { destinationBranch: '0001', destinationAccount: '999999', amountCents }, amountCents === '197' ? randomUUID() : key);
      expect([res.status, res.body.code]).toEqual([400, 'DESTINATION_NOT_FOUND']);
    }
    expect(await balanceOf(payer.account.id)).toBe(10_000n);
    await new Promise((r) => setTimeout(r, 1500));
    await expectNothingRecorded(tenantId);
  }, 90_000);
});

describe('fees of every kind, account-level and tenant-level, on both sides', () => {
  test('an account-level receive fee: TEVs into that account settle with the fee on both hosts; below the fee is 422 AMOUNT_BELOW_RECEIVE_FEE', async () => {
    const { tenantId, parties } = await tenantWith(2);
    const [payer, payee] = parties as [Party, Party];
    await fund(platform, tenantId, payer.account.id, 10_000);
    await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--account', payee.account.id, '--tev-in-cents', '50');

    const viaApi = await apiTev(payer, { destinationBranch: payee.account.agency, destinationAccount: payee.account.number, amountCents: '1000' });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body).toMatchObject({ kind: 'done', status: 'DONE', amountCents: '1000', feeCents: '0' });
    const viaHolder = await holderTev(payer, { accountNumber: payee.account.number, amount: 5 });
    expect(viaHolder.status).toBe(200);
    expect(viaHolder.body.tev).toMatchObject({ kind: 'done', status: 'DONE', amountCents: '500', feeCents: '0' });
    const incoming = await http('GET', `${platform.apiUrl}/v1/tev/${viaApi.body.tevId}`, { headers: { authorization: `Bearer ${payee.key}` } });
    expect(incoming.body).toMatchObject({ direction: 'in', feeCents: '50' });

    const below = await apiTev(payer, { destinationBranch: payee.account.agency, destinationAccount: payee.account.number, amountCents: '50' });
    expect(below.status).toBe(422);
    expect(below.body).toMatchObject({ kind: 'rejected', status: 'FAILED', reason: 'AMOUNT_BELOW_RECEIVE_FEE' });

    expect(await balanceOf(payer.account.id)).toBe(10_000n - 1500n);
    expect(await balanceOf(payee.account.id)).toBe(1500n - 100n);
    expect(await revenueOf(tenantId)).toBe(100n);
    expect(await sql(`select count(*)::int as n from workflow_start where args::text like $1`, [`%${tenantId}%`])).toEqual([{ n: 0 }]);
  }, 90_000);

  test('send and receive fees set per account and per tenant, field by field, are charged to the right side on both hosts', async () => {
    const { tenantId, parties } = await tenantWith(4);
    const [a, b, c, d] = parties as [Party, Party, Party, Party];
    await Promise.all(parties.map((p) => fund(platform, tenantId, p.account.id, 100_000)));
    await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--tev-out-cents', '30', '--tev-in-cents', '20');
    await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--account', a.account.id, '--tev-out-cents', '7');
    await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--account', b.account.id, '--tev-in-cents', '0');
    await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--account', c.account.id, '--tev-in-cents', '90', '--tev-out-cents', '0');

    // [payer, payee, host, amount, the payer's fee, the payee's fee]
    const cases: [Party, Party, 'api' | 'holder', bigint, bigint, bigint][] = [
      [a, b, 'api', 1000n, 7n, 0n], // a's own send fee; b's own receive fee of 0 beats the tenant's 20
      [a, c, 'holder', 1000n, 7n, 90n], // c's own receive fee
      [b, d, 'api', 1000n, 30n, 20n], // the tenant's fees on both sides
      [c, d, 'holder', 1000n, 0n, 20n], // c's own send fee of 0; the tenant's receive fee
      [d, c, 'api', 91n, 30n, 90n], // just above c's receive fee
    ];
    const before = new Map(await Promise.all(parties.map(async (p) => [p.account.id, await balanceOf(p.account.id)] as const)));
    const revenueBefore = await revenueOf(tenantId);
    let fees = 0n;
    for (const [payer, payee, host, amount, feeOut, feeIn] of cases) {
      const res =
        host === 'api'
          ? await apiTev(payer, { destinationBranch: payee.account.agency, destinationAccount: payee.account.number, amountCents: amount.toString() })
          : await holderTev(payer, { accountNumber: payee.account.number, amount: Number(amount) / 100 });
      expect(res.status).toBe(200);
      const tev = host === 'api' ? res.body : res.body.tev;
      expect(tev).toMatchObject({ kind: 'done', status: 'DONE', feeCents: feeOut.toString() });
      before.set(payer.account.id, before.get(payer.account.id)! - amount - feeOut);
      before.set(payee.account.id, before.get(payee.account.id)! + amount - feeIn);
      fees += feeOut + feeIn;
    }
    for (const p of parties) expect([p.account.id, await balanceOf(p.account.id)]).toEqual([p.account.id, before.get(p.account.id)]);
    expect(await revenueOf(tenantId)).toBe(revenueBefore + fees);

    // At or below the receive fee, on either host: refused, nothing moves.
    const atFee = await apiTev(d, { destinationBranch: c.account.agency, destinationAccount: c.account.number, amountCents: '90' });
    expect(atFee.body).toMatchObject({ kind: 'rejected', reason: 'AMOUNT_BELOW_RECEIVE_FEE' });
    const belowTenantFee = await holderTev(a, { accountNumber: d.account.number, amount: 0.2 });
    expect(belowTenantFee.status).toBe(422);
    expect(belowTenantFee.body.tev).toMatchObject({ kind: 'rejected', reason: 'AMOUNT_BELOW_RECEIVE_FEE' });
    for (const p of parties) expect(await balanceOf(p.account.id)).toBe(before.get(p.account.id));
  }, 120_000);
});

describe('an error raised inside the settlement', () => {
  /** A trigger that makes the ledger refuse this tenant's transfers: a defect that no retry heals. */
  async function withRefusingLedger<T>(tenantId: string, event: 'insert' | 'update', run: () => Promise<T>): Promise<T> {
    const name = `refuse_${tenantId.replaceAll('-', '_')}`;
    await sql(`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'ledger refuses this transfer'; end $$`);
    await sql(`create trigger ${name} before ${event} on tev_transfer for each row when (new.tenant_id = '${tenantId}') execute function ${name}()`);
    try {
      return await run();
    } finally {
      await sql(`drop trigger ${name} on tev_transfer`);
      await sql(`drop function ${name}()`);
    }
  }

  test('is a known outcome: 500 on both hosts, nothing moved, no workflow; the same key settles once the defect is gone', async () => {
    const { tenantId, parties } = await tenantWith(2);
    const [payer, payee] = parties as [Party, Party];
    await fund(platform, tenantId, payer.account.id, 10_000);
    const key = randomUUID();
    const body = { destinationBranch: payee.account.agency, destinationAccount: payee.account.number, amountCents: '1234' };
    await withRefusingLedger(tenantId, 'insert', async () => {
      const viaApi = await apiTev(payer, body, key);
      expect([viaApi.status, viaApi.body.code]).toEqual([500, 'INTERNAL_ERROR']);
      expect(viaApi.body.message).toMatch(/nothing moved/);
      const viaHolder = await holderTev(payer, { accountNumber: payee.account.number, amount: 1 });
      expect([viaHolder.status, viaHolder.body.code]).toEqual([500, 'INTERNAL_ERROR']);
    });
    expect(await balanceOf(payer.account.id)).toBe(10_000n);
    await new Promise((r) => setTimeout(r, 1500));
    await expectNothingRecorded(tenantId);

    const retried = await apiTev(payer, body, key);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ kind: 'done', status: 'DONE', amountCents: '1234' });
    expect(await balanceOf(payee.account.id)).toBe(1234n);
  }, 90_000);

  test('met by a resolution workflow: the run fails at once, visibly, instead of retrying without end', async () => {
    const { tenantId, parties } = await tenantWith(2);
    const [payer, payee] = parties as [Party, Party];
    await fund(platform, tenantId, payer.account.id, 10_000);
    await withRefusingLedger(tenantId, 'update', async () => {
      // A sandbox ,97 amount is recorded PROCESSING and resolved by its workflow, whose settlement now raises.
      const res = await apiTev(payer, { destinationBranch: payee.account.agency, destinationAccount: payee.account.number, amountCents: '197' });
      expect(res.status).toBe(502);
      const handle = temporal.workflow.getHandle(`tev-${res.body.tevId}`);
      const status = await waitFor(async () => {
        const described = await handle.describe().catch(() => null);
        return described && described.status.name !== 'RUNNING' ? described.status.name : null;
      }, 20_000, 'the resolution run to close');
      expect(status).toBe('FAILED');
      const history = await handle.fetchHistory();
      const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
      expect(attempts).toEqual([1]);
    });
    // Nothing moved; the transfer stays as recorded, without an outcome, for an operator to see.
    expect(await balanceOf(payer.account.id)).toBe(10_000n);
    expect(await balanceOf(payee.account.id)).toBe(0n);
  }, 90_000);
});
