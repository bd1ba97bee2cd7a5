/**
 * Transaction limits over HTTP, on a real api, worker, PostgreSQL and Temporal: the operator's `limits:set`, the holder's
 * `GET`/`PUT /accounts/:accountId/limits` and `DELETE …/limits/pending`, the increase's workflow, and the refusals
 * payments get. Payments are refused here by the limits per transaction and per month, which the hour the suite runs
 * at does not change; the day and night periods' boundaries are tested in test/domain/limits.test.ts with the clock set.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { delayedEffectStart, delayedEffectWorkflowId } from '../workflows/contracts/delayed-effect.ts';
import { admin, adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let temporal: Client;
let connection: Connection;
let tenantId: string;

/** Cents per limit: the defaults, and the most a holder may raise each to. */
const DEFAULTS = ['--per-transaction-cents', '50000', '--day-cents', '100000', '--night-cents', '100000', '--month-cents', '1000000'];
const MAXIMUMS = ['--max-per-transaction-cents', '200000', '--max-day-cents', '500000', '--max-night-cents', '200000', '--max-month-cents', '2000000'];

beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '300' });
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS });
  temporal = new Client({ connection });
  tenantId = await newTenant(platform);
  for (const channel of ['PIX', 'TEV']) await adminOk(platform.env, 'limits:set', '--tenant', tenantId, '--holder-type', 'PERSON', '--channel', channel, ...DEFAULTS, ...MAXIMUMS);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

/** A holder of the tenant with R$ 10,000.00. */
async function holder(): Promise<Onboarded> {
  const h = await onboarded(platform, tenantId);
  await fund(platform, tenantId, h.account.id, 1_000_000);
  return h;
}

const limitsUrl = (h: Onboarded, accountId = h.account.id) => `${platform.holderUrl}/accounts/${accountId}/limits`;
const getLimits = (h: Onboarded, accountId?: string) => http('GET', limitsUrl(h, accountId), { headers: tenantHeaders(tenantId, h.token) });
const putLimits = (h: Onboarded, body: Record<string, unknown>, accountId?: string) =>
  http('PUT', limitsUrl(h, accountId), { body: { pin: h.pin, ...body }, headers: tenantHeaders(tenantId, h.token) });
const cancelPending = (h: Onboarded) => http('DELETE', `${limitsUrl(h)}/pending`, { headers: tenantHeaders(tenantId, h.token) });
const payPix = (h: Onboarded, amount: number) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: h.account.id, pixKey: 'joao@example.com', pixKeyType: 'EMAIL', amount, pin: h.pin },
    headers: { ...tenantHeaders(tenantId, h.token), 'idempotency-key': randomUUID() },
  });
const payTev = (from: Onboarded, to: Onboarded, amount: number) =>
  http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, {
    body: { accountNumber: to.account.number, amount, pin: from.pin },
    headers: { ...tenantHeaders(tenantId, from.token), 'idempotency-key': randomUUID() },
  });

const workflowOf = (requestId: string) => delayedEffectWorkflowId('LIMIT_INCREASE', requestId);
const pendingRows = (accountId: string) => sql('select id, status from limit_change_request where account_id = $1 order by requested_at', [accountId]);

describe('limits:set, the operator command', () => {
  test('prints the policy in force; a first policy without every default, a default above its maximum or a night above the day is refused, changing nothing', async () => {
    const other = await newTenant(platform);
    const set = (...args: string[]) => admin(platform.env, 'limits:set', '--tenant', other, '--holder-type', 'COMPANY', '--channel', 'PIX', ...args);
    const missing = await set('--day-cents', '100');
    expect([missing.exitCode, missing.err]).toEqual([1, { code: 'VALIDATION_ERROR', message: "A tenant's first COMPANY PIX policy needs every default: --per-transaction-cents, --night-cents, --month-cents" }]);
    const above = await set(...DEFAULTS, '--max-day-cents', '99999');
    expect(above.err).toEqual({ code: 'LIMIT_ABOVE_MAXIMUM', message: 'Above the most the tenant allows: --day-cents 100000 is above --max-day-cents 99999' });
    const night = await set('--per-transaction-cents', '1', '--day-cents', '100', '--night-cents', '101', '--month-cents', '1000');
    // Its maximums are its defaults: both break the rule.
    expect(night.err).toEqual({
      code: 'NIGHT_LIMIT_ABOVE_DAY',
      message: "A night limit cannot be above its channel's day limit: --night-cents 101 is above --day-cents 100; --max-night-cents 101 is above --max-day-cents 100",
    });
    for (const bad of [['--day-cents', '-1'], ['--day-cents', '10.5'], ['--day-cents', 'lots'], ['--channel', 'BOLETO']]) {
      const r = await admin(platform.env, 'limits:set', '--tenant', other, '--holder-type', 'COMPANY', '--channel', 'PIX', ...DEFAULTS, ...bad);
      expect([r.exitCode, r.err.code]).toEqual([2, 'USAGE_ERROR']);
    }
    expect(await sql('select * from limit_policy where tenant_id = $1', [other])).toEqual([]);

    const first = await adminOk(platform.env, 'limits:set', '--tenant', other, '--holder-type', 'COMPANY', '--channel', 'PIX', ...DEFAULTS);
    const defaults = { perTransactionCents: '50000', dayCents: '100000', nightCents: '100000', monthCents: '1000000' };
    expect(first).toEqual({ tenantId: other, holderType: 'COMPANY', channel: 'PIX', ...defaults, maximum: defaults });
    const raised = await adminOk(platform.env, 'limits:set', '--tenant', other, '--holder-type', 'COMPANY', '--channel', 'PIX', '--max-day-cents', '300000');
    expect(raised.maximum).toEqual({ ...defaults, dayCents: '300000' });
  });
});

describe('GET /accounts/:accountId/limits', () => {
  test("the tenant's defaults in force, the maximums, what is used and remains now, the night start, nothing pending", async () => {
    const maria = await holder();
    const joao = await holder();
    expect((await payPix(maria, 100)).status).toBe(201);
    expect((await payTev(maria, joao, 250)).status).toBe(200);
    const res = await getLimits(maria);
    expect(res.status).toBe(200);
    const channel = (usedCents: number) => ({
      perTransactionCents: '50000',
      dayCents: '100000',
      nightCents: '100000',
      monthCents: '1000000',
      maximum: { perTransactionCents: '200000', dayCents: '500000', nightCents: '200000', monthCents: '2000000' },
      // Both payments in the current period, unless 20:00 or 06:00 came between them.
      periodUsedCents: expect.stringMatching(/^\d+$/),
      periodRemainingCents: expect.stringMatching(/^\d+$/),
      monthUsedCents: usedCents.toString(),
      monthRemainingCents: (1_000_000 - usedCents).toString(),
    });
    expect(res.body).toEqual({ accountId: maria.account.id, nightStart: '20:00', period: expect.stringMatching(/^(DAY|NIGHT)$/), pix: channel(10_000), tev: channel(25_000), pending: null });
    for (const c of [res.body.pix, res.body.tev]) expect(BigInt(c.periodUsedCents) + BigInt(c.periodRemainingCents)).toBe(100_000n);
    expect(BigInt(res.body.pix.periodUsedCents)).toBeLessThanOrEqual(10_000n);
  });

  test('a company of a tenant with no policy for companies has no limits; another holder\'s account is not found', async () => {
    const company = await onboarded(platform, tenantId, 'COMPANY');
    const res = await getLimits(company);
    const none = { perTransactionCents: null, dayCents: null, nightCents: null, monthCents: null };
    expect(res.body.pix).toEqual({ ...none, maximum: none, periodUsedCents: '0', periodRemainingCents: null, monthUsedCents: '0', monthRemainingCents: null });
    const stranger = await getLimits(company, (await holder()).account.id);
    expect([stranger.status, stranger.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('payments over a limit', () => {
  test('a Pix payment is 422 LIMIT_EXCEEDED naming the limit, its value and what remains; a TEV is rejected with reason LIMIT_EXCEEDED; nothing moves', async () => {
    const maria = await holder();
    const joao = await holder();
    // A month of R$ 600.00, which the hour of the run does not change.
    expect((await putLimits(maria, { pix: { monthCents: '60000' } })).status).toBe(200);
    expect((await payPix(maria, 500)).status).toBe(201);
    const before = await balanceOf(maria.account.id);
    const pix = await payPix(maria, 100.01);
    expect(pix.status).toBe(422);
    const message = 'The amount is above what remains of the PIX month limit: 10000 of 60000 cents';
    expect(pix.body).toEqual({
      code: 'LIMIT_EXCEEDED',
      message,
      details: [{ path: 'body.amount', message, channel: 'PIX', period: 'MONTH', limitCents: '60000', remainingCents: '10000' }],
    });
    const perTransaction = await payPix(maria, 500.01);
    expect(perTransaction.body.details[0]).toMatchObject({ period: 'TRANSACTION', limitCents: '50000', remainingCents: '50000' });
    const tev = await payTev(maria, joao, 500.01);
    expect([tev.status, tev.body.tev.kind, tev.body.tev.reason]).toEqual([422, 'rejected', 'LIMIT_EXCEEDED']);
    const [event] = await sql(`select data->>'reason' as reason from event_outbox where type = 'tev.out.failed' and data->>'tevTransferId' = $1`, [tev.body.tev.tevId]);
    expect(event).toEqual({ reason: 'LIMIT_EXCEEDED' });
    expect(await balanceOf(maria.account.id)).toBe(before);
  });

  describe('30 payments at once against a limit that allows 3', () => {
    // A PIN-exempt tenant's client tokens: a PIN is checked three at a time (more are told 429 to retry).
    let exemptTenant: string;
    let tenantKey: string;
    beforeAll(async () => {
      exemptTenant = await newTenant(platform, { pinExempt: true });
      for (const channel of ['PIX', 'TEV']) await adminOk(platform.env, 'limits:set', '--tenant', exemptTenant, '--holder-type', 'PERSON', '--channel', channel, ...DEFAULTS);
      tenantKey = (await adminOk(platform.env, 'tenant-key:create', '--tenant', exemptTenant)).key;
    }, 60_000);
    afterAll(() => expectLedgerConsistent(exemptTenant));

    async function clientHolder() {
      const h = await onboarded(platform, exemptTenant);
      await fund(platform, exemptTenant, h.account.id, 1_000_000);
      const client = await http('POST', `${platform.holderUrl}/authenticate/clients`, { body: { document: h.document }, headers: { ...tenantHeaders(exemptTenant), 'x-tenant-api-key': tenantKey } });
      const headers = { ...tenantHeaders(exemptTenant, client.body.token) };
      // A month of R$ 30.00: three payments of R$ 10.00, whatever the hour.
      const limited = await http('PUT', `${platform.holderUrl}/accounts/${h.account.id}/limits`, { body: { pix: { monthCents: '3000' }, tev: { monthCents: '3000' } }, headers });
      expect(limited.status).toBe(200);
      return { ...h, headers };
    }

    test('Pix: exactly 3 are debited', async () => {
      const maria = await clientHolder();
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          http('POST', `${platform.holderUrl}/pix/payment`, {
            body: { accountId: maria.account.id, pixKey: 'joao@example.com', pixKeyType: 'EMAIL', amount: 10 },
            headers: { ...maria.headers, 'idempotency-key': randomUUID() },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
      expect(answers.filter((a) => a.status === 422 && a.body.code === 'LIMIT_EXCEEDED')).toHaveLength(27);
      expect(await balanceOf(maria.account.id)).toBe(1_000_000n - 3_000n);
    });

    test('TEV: exactly 3 settle', async () => {
      const [maria, joao] = await Promise.all([clientHolder(), clientHolder()]);
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          http('POST', `${platform.holderUrl}/accounts/${maria.account.id}/tev/payment`, {
            body: { accountNumber: joao.account.number, amount: 10 },
            headers: { ...maria.headers, 'idempotency-key': randomUUID() },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
      expect(answers.filter((a) => a.status === 422 && a.body.tev.reason === 'LIMIT_EXCEEDED')).toHaveLength(27);
      expect(await balanceOf(joao.account.id)).toBe(1_000_000n + 3_000n);
    });
  });

  test('a payout that fails at the provider, or is returned, gives its amount back', async () => {
    const maria = await holder();
    // ,91 fails at the sandbox PSP; ,93 settles and is returned whole.
    expect((await payPix(maria, 100.91)).status).toBe(201);
    expect((await payPix(maria, 200.93)).status).toBe(201);
    expect((await getLimits(maria)).body.pix.monthUsedCents).toBe('30184');
    await waitFor(async () => (await getLimits(maria)).body.pix.monthUsedCents === '0', 20_000);
  });

  test("a held payment is checked when the approver's decision runs it", async () => {
    const maria = await holder();
    const approver = await onboarded(platform, tenantId);
    const joao = await holder();
    await adminOk(platform.env, 'account:dual-approval', '--account', maria.account.id, '--approver-document', approver.document);
    const held = await payTev(maria, joao, 300);
    expect(held.status).toBe(202);
    // Within the limit when held; not when approved.
    expect((await putLimits(maria, { tev: { perTransactionCents: '20000' } })).status).toBe(200);
    const decided = await http('POST', `${platform.holderUrl}/approvals/${held.body.approvalRequestId}/approve`, { body: { pin: approver.pin }, headers: tenantHeaders(tenantId, approver.token) });
    expect(decided.body).toMatchObject({ status: 'FAILED', result: { status: 'FAILED', reason: 'LIMIT_EXCEEDED' } });
    expect(await balanceOf(joao.account.id)).toBe(1_000_000n);
  });
});

describe('PUT /accounts/:accountId/limits', () => {
  test('a decrease is in force at once', async () => {
    const maria = await holder();
    const res = await putLimits(maria, { pix: { perTransactionCents: '1000', nightCents: 0 }, tev: { monthCents: '500000' } });
    expect(res.status).toBe(200);
    expect(res.body.pix).toMatchObject({ perTransactionCents: '1000', dayCents: '100000', nightCents: '0' });
    expect(res.body.tev).toMatchObject({ monthCents: '500000', monthRemainingCents: '500000' });
    expect(res.body.pending).toBeNull();
    expect((await payPix(maria, 10.01)).body.details[0]).toMatchObject({ period: 'TRANSACTION', limitCents: '1000' });
    expect(await pendingRows(maria.account.id)).toEqual([]);
  });

  test('an increase waits in a request with its workflow; a new change replaces it; the holder cancels it; each run ends', async () => {
    const maria = await holder();
    const before = Date.now();
    const first = await putLimits(maria, { nightStart: '22:00', pix: { dayCents: '300000', perTransactionCents: '40000' } });
    expect(first.status).toBe(200);
    // The lowered value at once, the raises pending for 24 hours.
    expect(first.body).toMatchObject({ nightStart: '20:00', pix: { perTransactionCents: '40000', dayCents: '100000' } });
    expect(first.body.pending).toEqual({
      requestId: expect.stringMatching(/^[a-z0-9]{24}$/),
      status: 'PENDING',
      requestedAt: expect.any(String),
      effectiveAt: expect.any(String),
      nightStart: '22:00',
      pix: { dayCents: '300000' },
    });
    const delay = Date.parse(first.body.pending.effectiveAt) - before;
    expect(delay).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(delay).toBeLessThan(24 * 3_600_000 + 60_000);
    const firstId = first.body.pending.requestId;
    // Found as the Temporal UI finds it: by the account and the request.
    const found = async () => {
      const runs: string[] = [];
      for await (const w of temporal.workflow.list({ query: `DelayedEffectId = "${firstId}" AND AccountId = "${maria.account.id}" AND TenantId = "${tenantId}"` })) runs.push(w.workflowId);
      return runs;
    };
    await waitFor(async () => (await found()).length > 0, 10_000);
    expect(await found()).toEqual([workflowOf(firstId)]);
    const run = temporal.workflow.getHandle(workflowOf(firstId));
    expect((await run.describe()).status.name).toBe('RUNNING');
    expect(await getLimits(maria)).toMatchObject({ body: { nightStart: '20:00', pix: { dayCents: '100000' }, pending: { requestId: firstId } } });

    const second = await putLimits(maria, { tev: { monthCents: '1500000' } });
    const secondId = second.body.pending.requestId;
    expect(second.body.pending).toMatchObject({ tev: { monthCents: '1500000' } });
    expect(second.body.pending.pix).toBeUndefined();
    expect(await run.result()).toBe('CANCELLED');
    expect(await sql('select status, replaced_by from limit_change_request where id = $1', [firstId])).toEqual([{ status: 'REPLACED', replaced_by: secondId }]);

    const cancelled = await cancelPending(maria);
    expect([cancelled.status, cancelled.body.pending, cancelled.body.tev.monthCents]).toEqual([200, null, '1000000']);
    expect(await temporal.workflow.getHandle(workflowOf(secondId)).result()).toBe('CANCELLED');
    expect(await pendingRows(maria.account.id)).toEqual([
      { id: firstId, status: 'REPLACED' },
      { id: secondId, status: 'CANCELLED' },
    ]);
    const again = await cancelPending(maria);
    expect([again.status, again.body.code]).toEqual([404, 'NOT_FOUND']);
    // Had its signal been lost, the run's step at its time finds the request cancelled and changes nothing.
    const late = delayedEffectStart({ kind: 'LIMIT_INCREASE', recordId: secondId, tenantId, accountId: maria.account.id, effectiveAt: new Date().toISOString() });
    const lateRun = await temporal.workflow.start(late.workflowType, { taskQueue: platform.env.TEMPORAL_TASK_QUEUE!, workflowId: `${late.workflowId}-late`, args: late.args });
    expect(await lateRun.result()).toBe('CANCELLED');
    expect((await getLimits(maria)).body.tev.monthCents).toBe('1000000');
  });

  test('the increase takes effect at its time, once, across a worker restart (a run given a near time through its input); an earlier night start is at once', async () => {
    const maria = await holder();
    const requested = await putLimits(maria, { nightStart: '22:00', pix: { dayCents: '400000', nightCents: '150000' } });
    const requestId = requested.body.pending.requestId;
    // The request's own run waits 24 hours; a second run of the same request, due in 3 s, stands for its timer firing.
    const start = delayedEffectStart({ kind: 'LIMIT_INCREASE', recordId: requestId, tenantId, accountId: maria.account.id, effectiveAt: new Date(Date.now() + 3_000).toISOString() });
    const startNear = (suffix: string) =>
      temporal.workflow.start(start.workflowType, { taskQueue: platform.env.TEMPORAL_TASK_QUEUE!, workflowId: `${start.workflowId}-${suffix}`, args: start.args });
    const near = await startNear('near');
    await platform.stopWorker();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect((await getLimits(maria)).body.pix.dayCents).toBe('100000');
    await platform.startWorker();
    expect(await near.result()).toBe('APPLIED');
    const applied = await getLimits(maria);
    expect(applied.body).toMatchObject({ nightStart: '22:00', pix: { dayCents: '400000', nightCents: '150000' }, pending: null });
    // Its time again (the request's own run, when it fires): nothing more changes.
    expect(await (await startNear('again')).result()).toBe('APPLIED');
    expect(await sql('select status from limit_change_request where id = $1', [requestId])).toEqual([{ status: 'APPLIED' }]);
    await temporal.workflow.getHandle(workflowOf(requestId)).terminate('test: the near run stood for its timer');
    // Back to 20:00, the earlier night start: at once.
    const earlier = await putLimits(maria, { nightStart: '20:00' });
    expect([earlier.body.nightStart, earlier.body.pending]).toEqual(['20:00', null]);
  });

  describe('refused, with nothing changed', () => {
    let maria: Onboarded;
    let stranger: Onboarded;
    beforeAll(async () => {
      [maria, stranger] = await Promise.all([holder(), holder()]);
    }, 60_000);

    test.each([
      ['a negative amount', { pix: { dayCents: '-1' } }, 400, 'VALIDATION_ERROR'],
      ['an amount that is not whole cents', { pix: { dayCents: '10.5' } }, 400, 'VALIDATION_ERROR'],
      ['a JSON number with decimals', { tev: { monthCents: 10.5 } }, 400, 'VALIDATION_ERROR'],
      ['an unknown field', { pix: { weekCents: '100' } }, 400, 'VALIDATION_ERROR'],
      ['another night start', { nightStart: '21:00' }, 400, 'VALIDATION_ERROR'],
      ['nothing to change', {}, 400, 'VALIDATION_ERROR'],
      ['a night above the day', { pix: { nightCents: '100001' } }, 422, 'NIGHT_LIMIT_ABOVE_DAY'],
      ['a day below the night in force', { tev: { dayCents: '99999' } }, 422, 'NIGHT_LIMIT_ABOVE_DAY'],
      ['above the maximum', { pix: { dayCents: '500001' } }, 422, 'LIMIT_ABOVE_MAXIMUM'],
    ])('%s', async (_, body, status, code) => {
      const before = await getLimits(maria);
      const res = await putLimits(maria, body);
      expect([res.status, res.body.code]).toEqual([status, code]);
      expect(res.body.details?.length).toBeGreaterThan(0);
      expect((await getLimits(maria)).body).toEqual(before.body);
    });

    test('details name the limits refused', async () => {
      const res = await putLimits(maria, { pix: { dayCents: '500001', monthCents: '2000001' } });
      expect(res.body).toEqual({
        code: 'LIMIT_ABOVE_MAXIMUM',
        message: 'Above the most the tenant allows: body.pix.dayCents at most 500000 cents; body.pix.monthCents at most 2000000 cents',
        details: [
          { path: 'body.pix.dayCents', message: 'at most 500000 cents' },
          { path: 'body.pix.monthCents', message: 'at most 2000000 cents' },
        ],
      });
    });

    test("another holder's account, no PIN, a wrong PIN", async () => {
      const foreign = await putLimits(maria, { pix: { dayCents: '1000', nightCents: '1000' } }, stranger.account.id);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
      const noPin = await http('PUT', limitsUrl(maria), { body: { pix: { dayCents: '1000', nightCents: '1000' } }, headers: tenantHeaders(tenantId, maria.token) });
      expect([noPin.status, noPin.body.code]).toEqual([400, 'VALIDATION_ERROR']);
      const wrongPin = await putLimits(maria, { pin: '3691', pix: { dayCents: '1000', nightCents: '1000' } });
      expect([wrongPin.status, wrongPin.body.code]).toEqual([403, 'INVALID_PIN']);
      expect((await getLimits(stranger)).body.pix.dayCents).toBe('100000');
      expect((await getLimits(maria)).body.pix.dayCents).toBe('100000');
      expect(await pendingRows(maria.account.id)).toEqual([]);
      // The wrong PIN counted; the right one clears it.
      expect((await putLimits(maria, { pix: { perTransactionCents: '50000' } })).status).toBe(200);
    });
  });
});
