import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { closeDb, sql } from './support/db.ts';
import { adminOk } from './support/admin.ts';
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

describe('synchronous settlement and submitted_unknown', () => {
  const readTev = (key: string, tevId: string) => http('GET', `${platform.apiUrl}/v1/tev/${tevId}`, { headers: { authorization: `Bearer ${key}` } });
  const eventsOf = async (tevId: string) => (await sql(`select type from event_outbox where data->>'tevTransferId' = $1 order by type`, [tevId])).map((e) => e.type);

  test('a TEV settles without the worker: nothing on its path calls Temporal', async () => {
    await fund(platform, tenantId, alice.account.id, 1_000);
    const before = await balanceOf(alice.account.id);
    await platform.stopWorker();
    try {
      const res = await apiTev(aliceKey, bob, 250);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ kind: 'done', status: 'DONE', amountCents: '250' });
      expect(await balanceOf(alice.account.id)).toBe(before - 250n);
    } finally {
      await platform.startWorker();
    }
    await expectLedgerConsistent(tenantId);
  });

  test('sandbox ,97: 502 submitted_unknown, the same key still unknown and nothing moved; resolved DONE by the workflow, even after a worker outage', async () => {
    await fund(platform, tenantId, alice.account.id, 5_000);
    const before = await balanceOf(alice.account.id);
    const key = randomUUID();
    await platform.stopWorker();
    let tevId: string;
    try {
      const res = await apiTev(aliceKey, bob, 1_297, key);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ kind: 'submitted_unknown', tevId: expect.any(String), status: 'SUBMITTED_UNKNOWN', reason: expect.any(String) });
      tevId = res.body.tevId;
      expect((await readTev(aliceKey, tevId)).body).toMatchObject({ status: 'SUBMITTED_UNKNOWN', resolvedAt: null });
      // A repeated Idempotency-Key while the outcome is unknown: the same transfer, still unknown, no money moved.
      const retry = await apiTev(aliceKey, bob, 1_297, key);
      expect(retry.status).toBe(502);
      expect(retry.body.tevId).toBe(tevId);
      expect(await balanceOf(alice.account.id)).toBe(before);
    } finally {
      await platform.startWorker();
    }
    const resolved = await waitFor(async () => {
      const r = await readTev(aliceKey, tevId);
      return r.body.status === 'DONE' ? r.body : undefined;
    }, 30_000, 'automatic resolution');
    expect(resolved.resolvedAt).toEqual(expect.any(String));
    expect(await balanceOf(alice.account.id)).toBe(before - 1_297n);
    expect(await eventsOf(tevId)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    const after = await apiTev(aliceKey, bob, 1_297, key);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ kind: 'done', tevId });
    expect(await eventsOf(tevId)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    await expectLedgerConsistent(tenantId);
  }, 90_000);

  test('sandbox ,98: 502 submitted_unknown, then FAILED with nothing moved and tev.out.failed once', async () => {
    await fund(platform, tenantId, alice.account.id, 5_000);
    const before = await balanceOf(alice.account.id);
    const res = await apiTev(aliceKey, bob, 1_298);
    expect(res.status).toBe(502);
    const failed = await waitFor(async () => {
      const r = await readTev(aliceKey, res.body.tevId);
      return r.body.status === 'FAILED' ? r.body : undefined;
    }, 30_000, 'automatic failure');
    expect(failed.resolvedAt).toEqual(expect.any(String));
    expect(await balanceOf(alice.account.id)).toBe(before);
    expect(await sql('select id from movement where operation_id = $1', [res.body.tevId])).toEqual([]);
    expect(await eventsOf(res.body.tevId)).toEqual(['tev.out.failed']);
    const [event] = await sql(`select data from event_outbox where data->>'tevTransferId' = $1`, [res.body.tevId]);
    expect(event.data.reason).toBe('SANDBOX_FAILURE');
    await expectLedgerConsistent(tenantId);
  }, 60_000);

  /** Sends the TEV while the source account's row is locked, and kills the settlement's connection as it waits. */
  async function tevWithKilledConnection(key: string, to: Onboarded, amountCents: number, sourceAccountId: string) {
    const blocker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select id from account where id = $1 for update', [sourceAccountId]);
      const pending = apiTev(key, to, amountCents);
      const [victim] = await waitFor(
        () => sql(`select pid from pg_stat_activity where query like '%settle_tev%' and wait_event_type = 'Lock' and pid <> pg_backend_pid()`).then((r) => (r.length ? r : undefined)),
        10_000,
        'the settlement waiting on the lock',
      );
      await sql('select pg_terminate_backend($1)', [victim.pid]);
      return await pending;
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
  }

  test('a connection killed with pg_terminate_backend during the transaction: 502, then resolved once with no client retry', async () => {
    await fund(platform, tenantId, alice.account.id, 5_000);
    const before = await balanceOf(alice.account.id);
    const res = await tevWithKilledConnection(aliceKey, bob, 777, alice.account.id);
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ kind: 'submitted_unknown', status: 'SUBMITTED_UNKNOWN' });
    const resolved = await waitFor(async () => {
      const r = await readTev(aliceKey, res.body.tevId);
      return r.body.status === 'DONE' ? r.body : undefined;
    }, 30_000, 'resolution by the workflow');
    expect(resolved.amountCents).toBe('777');
    expect(await balanceOf(alice.account.id)).toBe(before - 777n);
    expect(await eventsOf(res.body.tevId)).toEqual(['tev.in.received', 'tev.out.succeeded']);
    await expectLedgerConsistent(tenantId);
  }, 60_000);

  test('an account under dual approval whose TEV outcome was unknown: the resolution never skips the approver (FAILED APPROVAL_REQUIRED, nothing moved)', async () => {
    const [owner, approver] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
    await fund(platform, tenantId, owner.account.id, 5_000);
    await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
    const ownerKey = await apiKey(platform, tenantId, await pixAccountIdOf(platform, tenantId, owner.document));
    const res = await tevWithKilledConnection(ownerKey, bob, 300, owner.account.id);
    expect(res.status).toBe(502);
    const failed = await waitFor(async () => {
      const r = await readTev(ownerKey, res.body.tevId);
      return r.body.status === 'FAILED' ? r.body : undefined;
    }, 30_000, 'resolution by the workflow');
    expect(failed.resolvedAt).toEqual(expect.any(String));
    expect(await balanceOf(owner.account.id)).toBe(5_000n);
    const [event] = await sql(`select data from event_outbox where data->>'tevTransferId' = $1`, [res.body.tevId]);
    expect(event.data.reason).toBe('APPROVAL_REQUIRED');
    await expectLedgerConsistent(tenantId);
  }, 60_000);

  test('operators find the run by tenant, account and tevId; no personal data in ids or search attributes', async () => {
    await fund(platform, tenantId, bob.account.id, 1_000);
    const res = await apiTev(bobKey, alice, 97);
    expect(res.status).toBe(502);
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
