import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let aliceKey: string;
let bobKey: string;
beforeAll(async () => {
  // A short response deadline so `submitted_unknown` is observed quickly.
  platform = await startPlatform({ TEV_RESPONSE_DEADLINE_MS: '2000', DATABASE_POOL_MAX: '20' });
  tenantId = await newTenant(platform);
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  aliceKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, alice.document));
  bobKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, bob.document));
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const apiTev = (key: string, to: Onboarded, amountCents: number, idempotencyKey = randomUUID()) =>
  http('POST', `${platform.apiUrl}/v1/tev`, {
    body: { destinationBranch: to.account.agency, destinationAccount: to.account.number, amountCents },
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
  });

describe('concurrency', () => {
  test('20 parallel requests with one Idempotency-Key move the money once and all get the same result', async () => {
    await fund(platform, tenantId, alice.account.id, 10_000);
    const before = await balanceOf(alice.account.id);
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => apiTev(aliceKey, bob, 123, key)));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(results.map((r) => r.body.tevId)).size).toBe(1);
    expect(await balanceOf(alice.account.id)).toBe(before - 123n);
    const movements = await sql('select source from movement where operation_id = $1 order by source', [results[0]!.body.tevId]);
    expect(movements.map((m) => m.source)).toEqual(['TEF_IN', 'TEF_OUT']);
    await expectLedgerConsistent(tenantId);
  });

  test('the holder API with a repeated Idempotency-Key, in parallel, moves the money once', async () => {
    await fund(platform, tenantId, alice.account.id, 1_000);
    const before = await balanceOf(alice.account.id);
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, {
          body: { accountNumber: bob.account.number, amount: 2.5, pin: alice.pin },
          headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': key },
        }),
      ),
    );
    // At most three PIN checks of one holder run at once; the others are told to retry (429) and change nothing.
    const done = results.filter((r) => r.status === 200);
    expect(done.length).toBeGreaterThanOrEqual(3);
    expect(results.every((r) => r.status === 200 || (r.status === 429 && r.body.code === 'RATE_LIMITED'))).toBe(true);
    expect(new Set(done.map((r) => r.body.tev.tevId)).size).toBe(1);
    expect(await balanceOf(alice.account.id)).toBe(before - 250n);
  });

  test('50 parallel transfers draining one account never overdraw it', async () => {
    const t = await newTenant(platform);
    const [payer, payee] = await Promise.all([onboarded(platform, t), onboarded(platform, t)]);
    const key = await apiKey(platform, t, await pixAccountIdOf(platform, t, payer.document));
    await fund(platform, t, payer.account.id, 1_000);
    const results = await Promise.all(Array.from({ length: 50 }, () => apiTev(key, payee, 30)));
    // Under load some answers may be submitted_unknown (502); the platform resolves them, so judge the end state.
    expect(results.every((r) => [200, 422, 502].includes(r.status))).toBe(true);
    const outcomes = await waitFor(async () => {
      const rows = await sql(`select status, reason from tev_transfer where source_account_id = $1`, [payer.account.id]);
      return rows.every((r) => r.status !== 'PROCESSING') ? rows : undefined;
    }, 30_000, 'every transfer resolved');
    expect(outcomes.filter((r) => r.status === 'DONE')).toHaveLength(33);
    expect(outcomes.filter((r) => r.status === 'FAILED').map((r) => r.reason)).toEqual(Array(17).fill('INSUFFICIENT_BALANCE'));
    expect(await balanceOf(payer.account.id)).toBe(10n);
    expect(await balanceOf(payee.account.id)).toBe(990n);
    await expectLedgerConsistent(t);
  });

  test('opposite transfers in parallel do not deadlock', async () => {
    const t = await newTenant(platform);
    const [a, b] = await Promise.all([onboarded(platform, t), onboarded(platform, t)]);
    const [ka, kb] = [await apiKey(platform, t, await pixAccountIdOf(platform, t, a.document)), await apiKey(platform, t, await pixAccountIdOf(platform, t, b.document))];
    await Promise.all([fund(platform, t, a.account.id, 10_000), fund(platform, t, b.account.id, 10_000)]);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? apiTev(ka, b, 100 + i) : apiTev(kb, a, 100 + i))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const sentByA = results.filter((_, i) => i % 2 === 0).reduce((s, _r, j) => s + 100 + j * 2, 0);
    const sentByB = results.filter((_, i) => i % 2 === 1).reduce((s, _r, j) => s + 101 + j * 2, 0);
    expect(await balanceOf(a.account.id)).toBe(BigInt(10_000 - sentByA + sentByB));
    expect(await balanceOf(b.account.id)).toBe(BigInt(10_000 - sentByB + sentByA));
    await expectLedgerConsistent(t);
  });
});

describe('submitted_unknown', () => {
  test('with the worker down the caller gets 502 with the tevId; the platform resolves it to DONE once the worker is back', async () => {
    await fund(platform, tenantId, alice.account.id, 5_000);
    const before = await balanceOf(alice.account.id);
    await platform.stopWorker();
    const key = randomUUID();
    let res;
    try {
      res = await apiTev(aliceKey, bob, 432, key);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ kind: 'submitted_unknown', tevId: expect.any(String), status: 'SUBMITTED_UNKNOWN', reason: expect.any(String) });
      const read = await http('GET', `${platform.apiUrl}/v1/tev/${res.body.tevId}`, { headers: { authorization: `Bearer ${aliceKey}` } });
      expect(read.body).toMatchObject({ status: 'SUBMITTED_UNKNOWN', resolvedAt: null });
      // Retrying with the same key names the same transfer and still moves nothing twice.
      const retry = await apiTev(aliceKey, bob, 432, key);
      expect(retry.body.tevId).toBe(res.body.tevId);
      expect(await balanceOf(alice.account.id)).toBe(before);
    } finally {
      await platform.startWorker();
    }
    const resolved = await waitFor(async () => {
      const r = await http('GET', `${platform.apiUrl}/v1/tev/${res!.body.tevId}`, { headers: { authorization: `Bearer ${aliceKey}` } });
      return r.body.status === 'DONE' ? r.body : undefined;
    }, 30_000, 'automatic resolution');
    expect(resolved.resolvedAt).toEqual(expect.any(String));
    expect(await balanceOf(alice.account.id)).toBe(before - 432n);
    const evs = await sql(`select type from event_outbox where data->>'tevTransferId' = $1 order by type`, [res!.body.tevId]);
    expect(evs.map((e) => e.type)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    const after = await apiTev(aliceKey, bob, 432, key);
    expect(after.status).toBe(200);
    expect(after.body.tevId).toBe(res!.body.tevId);
    await expectLedgerConsistent(tenantId);
  }, 90_000);

  test('operators find the run by tenant, account and tevId; no personal data in ids or search attributes', async () => {
    const res = await apiTev(bobKey, alice, 1);
    const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    try {
      const client = new Client({ connection });
      const found = await waitFor(async () => {
        const runs = [];
        for await (const w of client.workflow.list({ query: `TevId = "${res.body.tevId}" AND TenantId = "${tenantId}" AND AccountId = "${bob.account.id}"` })) runs.push(w);
        return runs.length ? runs : undefined;
      }, 20_000, 'visibility');
      expect(found[0]!.workflowId).toBe(`tev-${res.body.tevId}`);
      const text = JSON.stringify({ id: found[0]!.workflowId, sa: found[0]!.searchAttributes });
      for (const personal of [alice.document, bob.document, 'Maria']) expect(text).not.toContain(personal);
    } finally {
      await connection.close();
    }
  });
});
