/**
 * Scheduled and recurring payments over real HTTP, with the api, the worker, PostgreSQL, Temporal and the sandbox PSP:
 * a TEV and a Pix paid at their time (a few seconds ahead, São Paulo time with seconds), recurrences and their
 * cancellation before and after an occurrence, the monthly day-31 rule, insufficient balance retried then failed with
 * the schedule alive, dual approval and limits applied when due (the held occurrence showing its approval), a
 * creation retried with its key after its due time, a worker killed at the due time and one away at it, the events,
 * the integration API, and refused input changing nothing. Retries are 1.2 s apart here (3 h by default).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { attemptKey } from '../src/schedules/execution.ts';
import { saoPauloWallClock } from '../src/shared/time.ts';
import { scheduledPaymentWorkflowId } from '../workflows/contracts/scheduled-payment.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

const RETRY_MS = 1_200;
const LATE_AFTER_MS = 2_000;

let platform: Platform;
let connection: Connection;
let temporal: Client;
let tenantId: string;
let payer: Onboarded;
let receiver: Onboarded;
const tenants: string[] = [];

beforeAll(async () => {
  platform = await startPlatform({
    SCHEDULED_PAYMENT_RETRIES: '2',
    SCHEDULED_PAYMENT_RETRY_INTERVAL_MS: String(RETRY_MS),
    SCHEDULED_PAYMENT_LATE_AFTER_MS: String(LATE_AFTER_MS),
    SANDBOX_PIX_SETTLE_MS: '300',
  });
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
  tenantId = await newTenant(platform);
  tenants.push(tenantId);
  [payer, receiver] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  await fund(platform, tenantId, payer.account.id, 1_000_000);
}, 120_000);

afterAll(async () => {
  for (const t of tenants) await expectLedgerConsistent(t);
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

/** São Paulo's date and time (with seconds) `ms` from now: what a holder writes to pay then. */
const inSaoPaulo = (ms: number): { date: string; time: string } => saoPauloWallClock(new Date(Date.now() + ms));

const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

const url = (h: Onboarded, accountId = h.account.id) => `${platform.holderUrl}/accounts/${accountId}/scheduled-payments`;
const schedule = (h: Onboarded, body: Record<string, unknown>, options: { accountId?: string; key?: string } = {}) =>
  http('POST', url(h, options.accountId), {
    body: { pin: h.pin, ...body },
    headers: { ...tenantHeaders(h.tenantId, h.token), ...(options.key ? { 'idempotency-key': options.key } : {}) },
  });
const read = (h: Onboarded, id: string, accountId?: string) => http('GET', `${url(h, accountId)}/${id}`, { headers: tenantHeaders(h.tenantId, h.token) });
const list = (h: Onboarded, query = '', accountId?: string) => http('GET', `${url(h, accountId)}${query}`, { headers: tenantHeaders(h.tenantId, h.token) });
const cancel = (h: Onboarded, id: string, accountId?: string) => http('DELETE', `${url(h, accountId)}/${id}`, { headers: tenantHeaders(h.tenantId, h.token) });
const cancelOne = (h: Onboarded, id: string, date: string, accountId?: string) =>
  http('DELETE', `${url(h, accountId)}/${id}/occurrences/${date}`, { headers: tenantHeaders(h.tenantId, h.token) });

const tevTo = (to: Onboarded, amountCents: string, seconds = 3, extra: Record<string, unknown> = {}) => ({
  kind: 'TEV',
  branch: to.account.agency,
  account: to.account.number,
  amountCents,
  ...inSaoPaulo(seconds * 1000),
  ...extra,
});

/** Until the occurrence of `date` (the first by default) matches `done`; answers the schedule as read then. */
async function until(h: Onboarded, id: string, done: (o: any) => boolean, what: string, date?: string, timeoutMs = 45_000) {
  return waitFor(
    async () => {
      const res = await read(h, id);
      const o = date ? res.body.occurrences.find((x: any) => x.date === date) : res.body.occurrences[0];
      return done(o) && res.body;
    },
    timeoutMs,
    what,
  );
}

const eventsOf = (scheduleId: string) =>
  sql<{ type: string; data: any }>(`select type, data from event_outbox where tenant_id = any($1) and data->>'scheduleId' = $2 order by txid, seq`, [tenants, scheduleId]);
const transfersOf = (scheduleId: string) => sql<{ status: string; reason: string | null; idempotency_key: string }>(
  `select status, reason, idempotency_key from tev_transfer where idempotency_key like $1 order by created_at`,
  [`scheduled-payment:${scheduleId}:%`],
);
/** The outcome of the schedule's run, once the reconciler started it (the request makes no Temporal call) and it ended. */
const runResult = (scheduleId: string) =>
  waitFor(() => temporal.workflow.getHandle(scheduledPaymentWorkflowId(scheduleId)).result().catch((err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err))), 30_000, 'the run ended');
const scheduleRows = async (accountId: string) => (await sql<{ n: number }>('select count(*)::int as n from scheduled_payment where account_id = $1', [accountId]))[0]!.n;

describe('a payment at its time', () => {
  test('a TEV a few seconds ahead: recorded with its workflow, paid once at its due time, events written', async () => {
    const before = await balanceOf(payer.account.id);
    const created = await schedule(payer, tevTo(receiver, '1234', 3, { description: 'Aluguel' }));
    expect(created.status).toBe(201);
    const s = created.body;
    expect(s).toMatchObject({ status: 'ACTIVE', kind: 'TEV', branch: receiver.account.agency, account: receiver.account.number, amountCents: '1234', recurrence: null });
    expect(s.occurrences).toEqual([expect.objectContaining({ status: 'SCHEDULED', attempts: 0, startedAt: null, late: null, tevId: null })]);
    expect(s.nextRunAt).toBe(s.occurrences[0].dueAt);

    const done = await until(payer, s.id, (o) => o.status === 'PAID', 'the occurrence paid');
    const paid = done.occurrences[0];
    expect(paid).toMatchObject({ status: 'PAID', attempts: 0, late: false, payoutId: null, approvalRequestId: null, reason: null, nextAttemptAt: null });
    expect(Date.parse(paid.startedAt)).toBeGreaterThanOrEqual(Date.parse(paid.dueAt));
    expect(done).toMatchObject({ status: 'FINISHED', nextRunAt: null });
    expect(await transfersOf(s.id)).toEqual([{ status: 'DONE', reason: null, idempotency_key: attemptKey(s.id, paid.date, 0) }]);
    const [tev] = await sql('select id, description, origin from tev_transfer where id = $1', [paid.tevId]);
    expect(tev).toEqual({ id: paid.tevId, description: 'Aluguel', origin: 'HOLDER_API' });
    expect(await balanceOf(payer.account.id)).toBe(before - 1234n);

    // Found in the Temporal UI by the account and the schedule; the run ends once nothing is left.
    const runs = [];
    for await (const run of temporal.workflow.list({ query: `AccountId = "${payer.account.id}" AND ScheduleId = "${s.id}"` })) runs.push(run.workflowId);
    expect(runs).toEqual([scheduledPaymentWorkflowId(s.id)]);
    expect(await runResult(s.id)).toBe('FINISHED');

    const events = await eventsOf(s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.scheduled.executed']);
    expect(events[0]!.data).toMatchObject({ scheduleId: s.id, occurrenceDate: paid.date, status: 'PAID', tevTransferId: paid.tevId, attempts: 1, late: false, kind: 'TEV' });
    const tevEvents = await sql("select type from event_outbox where tenant_id = $1 and type like 'tev.%' and data->>'tevTransferId' = $2 order by txid, seq", [tenantId, paid.tevId]);
    expect(tevEvents.map((e) => e.type)).toEqual(['tev.out.succeeded', 'tev.in.received']);
  });

  test('a Pix to a key: the key resolved when scheduled and again when paid, debited as a payout that settles', async () => {
    const created = await schedule(payer, { kind: 'PIX_KEY', pixKey: 'Loja@Example.com', pixKeyType: 'EMAIL', amountCents: 2500, ...inSaoPaulo(3000) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'PIX_KEY', pixKey: 'loja@example.com', pixKeyType: 'EMAIL', beneficiaryName: expect.any(String), branch: null, account: null });
    const paid = (await until(payer, created.body.id, (o) => o.status === 'PAID', 'the Pix paid')).occurrences[0];
    expect(paid.payoutId).toMatch(/^[a-z][0-9a-z]{23}$/);
    const [payout] = await waitFor(async () => {
      const rows = await sql('select status, amount_cents::text as amount, idempotency_key from pix_payout where id = $1', [paid.payoutId]);
      return rows[0]?.status === 'POSTED' && rows;
    }, 30_000, 'the payout settled');
    expect(payout).toEqual({ status: 'POSTED', amount: '2500', idempotency_key: attemptKey(created.body.id, paid.date, 0) });
    expect((await eventsOf(created.body.id)).map((e) => [e.type, e.data.payoutId])).toEqual([['payment.scheduled.executed', paid.payoutId]]);
  });
});

describe('recurrences and cancellation', () => {
  test('weekly: the first paid, one future occurrence cancelled alone, then the schedule cancelled after an occurrence', async () => {
    const created = await schedule(payer, tevTo(receiver, '300', 3, { recurrence: { frequency: 'WEEKLY', count: 4 } }));
    expect(created.status).toBe(201);
    const s = created.body;
    const first = s.date;
    expect(s.occurrences.map((o: any) => o.date)).toEqual([first, addDays(first, 7), addDays(first, 14), addDays(first, 21)]);
    expect(s.recurrence).toEqual({ frequency: 'WEEKLY', dayOfMonth: null, count: 4, until: null });
    await until(payer, s.id, (o) => o.status === 'PAID', 'the first occurrence paid');

    const one = await cancelOne(payer, s.id, addDays(first, 14));
    expect(one.status).toBe(200);
    expect(one.body.occurrences.map((o: any) => o.status)).toEqual(['PAID', 'SCHEDULED', 'CANCELLED', 'SCHEDULED']);
    expect(one.body).toMatchObject({ status: 'ACTIVE', nextRunAt: one.body.occurrences[1].dueAt });
    // Twice, or one that ran: 409; a date the schedule does not have: 404.
    expect((await cancelOne(payer, s.id, addDays(first, 14))).body.code).toBe('OCCURRENCE_NOT_CANCELLABLE');
    expect((await cancelOne(payer, s.id, first)).status).toBe(409);
    expect((await cancelOne(payer, s.id, addDays(first, 1))).status).toBe(404);

    const whole = await cancel(payer, s.id);
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({ status: 'CANCELLED', nextRunAt: null, cancelledAt: expect.any(String) });
    expect(whole.body.occurrences.map((o: any) => o.status)).toEqual(['PAID', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect(await runResult(s.id)).toBe('CANCELLED');
    const again = await cancel(payer, s.id);
    expect([again.status, again.body.code]).toEqual([409, 'SCHEDULE_NOT_ACTIVE']);
    expect(await transfersOf(s.id)).toHaveLength(1);
  });

  test('cancelled before its occurrence: nothing is paid, and the run ends at once', async () => {
    const before = await balanceOf(payer.account.id);
    const s = (await schedule(payer, tevTo(receiver, '777', 4))).body;
    const cancelled = await cancel(payer, s.id);
    expect(cancelled.body.occurrences.map((o: any) => o.status)).toEqual(['CANCELLED']);
    expect(await runResult(s.id)).toBe('CANCELLED');
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await transfersOf(s.id)).toEqual([]);
    expect(await balanceOf(payer.account.id)).toBe(before);
    expect(await eventsOf(s.id)).toEqual([]);
  });

  test("monthly from the 31st: the month's last day where it has none", async () => {
    const year = Number(inSaoPaulo(0).date.slice(0, 4)) + 1;
    const res = await schedule(payer, tevTo(receiver, '100', 0, { date: `${year}-01-31`, time: '09:15', recurrence: { frequency: 'MONTHLY', count: 5 } }));
    expect(res.status).toBe(201);
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    expect(res.body.occurrences.map((o: any) => o.date)).toEqual([`${year}-01-31`, `${year}-02-${leap ? 29 : 28}`, `${year}-03-31`, `${year}-04-30`, `${year}-05-31`]);
    expect(res.body.occurrences[0].dueAt).toBe(`${year}-01-31T12:15:00.000Z`);
    expect(res.body.time).toBe('09:15:00');
    expect((await cancel(payer, res.body.id)).status).toBe(200);
  });

  test('until a date, 06:00 by default; listed newest first, a page at a time', async () => {
    const h = await onboarded(platform, tenantId);
    const start = addDays(inSaoPaulo(0).date, 2);
    const ids = [];
    for (const n of [1, 2, 3]) {
      const res = await schedule(h, tevTo(receiver, String(n), 0, { date: start, time: undefined, recurrence: { frequency: 'WEEKLY', until: addDays(start, 14) } }));
      expect(res.status).toBe(201);
      expect(res.body.occurrences.map((o: any) => o.date)).toEqual([start, addDays(start, 7), addDays(start, 14)]);
      expect(res.body.time).toBe('06:00:00');
      ids.push(res.body.id);
    }
    const first = await list(h, '?limit=2');
    expect(first.body.scheduledPayments.map((s: any) => s.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.scheduledPayments[0]).not.toHaveProperty('occurrences');
    const next = await list(h, `?limit=2&cursor=${first.body.pagination.nextCursor}`);
    expect(next.body.scheduledPayments.map((s: any) => s.id)).toEqual([ids[0]]);
    expect(next.body.pagination).toEqual({ limit: 2, nextCursor: null, hasMore: false });
  });
});

describe('each occurrence through the normal payment path', () => {
  test('insufficient balance: retried, then FAILED with its event; the next occurrence stays scheduled', async () => {
    const poor = await onboarded(platform, tenantId);
    await fund(platform, tenantId, poor.account.id, 500);
    const s = (await schedule(poor, tevTo(receiver, '900', 3, { recurrence: { frequency: 'WEEKLY', count: 2 } }))).body;
    const retrying = await until(poor, s.id, (o) => o.attempts === 1, 'the first retry scheduled');
    expect(retrying.occurrences[0]).toMatchObject({ status: 'SCHEDULED', reason: 'INSUFFICIENT_BALANCE' });
    expect(Date.parse(retrying.occurrences[0].nextAttemptAt) - Date.parse(retrying.occurrences[0].startedAt)).toBeGreaterThanOrEqual(RETRY_MS - 200);
    const failed = await until(poor, s.id, (o) => o.status === 'FAILED', 'the occurrence failed');
    expect(failed.occurrences[0]).toMatchObject({ status: 'FAILED', attempts: 2, reason: 'INSUFFICIENT_BALANCE', tevId: null });
    expect(failed).toMatchObject({ status: 'ACTIVE', nextRunAt: failed.occurrences[1].dueAt });
    expect(failed.occurrences[1]).toMatchObject({ status: 'SCHEDULED', attempts: 0 });
    // Three attempts, each under its own key, each refused with nothing moved.
    expect((await transfersOf(s.id)).map((t) => [t.status, t.reason, t.idempotency_key])).toEqual(
      [0, 1, 2].map((n) => ['FAILED', 'INSUFFICIENT_BALANCE', attemptKey(s.id, s.date, n)]),
    );
    expect(await balanceOf(poor.account.id)).toBe(500n);
    const events = await eventsOf(s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.scheduled.failed']);
    expect(events[0]!.data).toMatchObject({ reason: 'INSUFFICIENT_BALANCE', attempts: 3, occurrenceDate: s.date });
    expect((await cancel(poor, s.id)).status).toBe(200);
  });

  test('funded between the attempts: the retry pays, under its own key, once', async () => {
    const poor = await onboarded(platform, tenantId);
    const s = (await schedule(poor, tevTo(receiver, '900', 3))).body;
    await until(poor, s.id, (o) => o.attempts === 1, 'the first attempt refused');
    await fund(platform, tenantId, poor.account.id, 1_000);
    const paid = (await until(poor, s.id, (o) => o.status === 'PAID', 'the retry paid')).occurrences[0];
    expect(paid).toMatchObject({ attempts: 1, reason: null });
    expect((await transfersOf(s.id)).map((t) => t.status)).toEqual(['FAILED', 'DONE']);
    expect(await balanceOf(poor.account.id)).toBe(100n);
    expect((await eventsOf(s.id))[0]!.data).toMatchObject({ status: 'PAID', attempts: 2 });
  });

  test("dual approval: the occurrence is held when due, for the account's approver; its view follows the approval, paid or rejected", async () => {
    const [owner, approver] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
    await fund(platform, tenantId, owner.account.id, 10_000);
    // Due 10 s ahead: the operator command below (a process of its own) must turn dual approval on before they are due.
    const s = (await schedule(owner, tevTo(receiver, '2000', 10))).body;
    const refused = (await schedule(owner, tevTo(receiver, '700', 10))).body;
    // Turned on after the schedule was made: what counts is the account as it is when the occurrence is due.
    await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
    const held = (await until(owner, s.id, (o) => o.status === 'HELD_FOR_APPROVAL', 'the occurrence held')).occurrences[0];
    expect(held.approvalRequestId).toEqual(expect.any(String));
    expect(held.approval).toEqual({ status: 'PENDING', decision: null, decidedAt: null, reason: null, tevId: null, payoutId: null });
    expect(await balanceOf(owner.account.id)).toBe(10_000n);
    expect((await eventsOf(s.id))[0]!.data).toMatchObject({ status: 'HELD_FOR_APPROVAL', approvalRequestId: held.approvalRequestId, tevTransferId: null });
    const decide = (id: string, verb: 'approve' | 'reject') => http('POST', `${platform.holderUrl}/approvals/${id}/${verb}`, { body: { pin: approver.pin }, headers: tenantHeaders(tenantId, approver.token) });
    const approved = await decide(held.approvalRequestId, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'EXECUTED', kind: 'TEV', amountCents: '2000' });
    expect(await balanceOf(owner.account.id)).toBe(8_000n);
    // The holder reads what the approver decided, and the transfer it made, on the occurrence itself.
    const executed = (await read(owner, s.id)).body.occurrences[0];
    expect(executed).toMatchObject({ status: 'HELD_FOR_APPROVAL', approvalRequestId: held.approvalRequestId });
    expect(executed.approval).toEqual({ status: 'EXECUTED', decision: 'APPROVED', decidedAt: expect.any(String), reason: null, tevId: approved.body.result.tevId, payoutId: null });
    const [tev] = await sql('select status, amount_cents::text as amount from tev_transfer where id = $1', [executed.approval.tevId]);
    expect(tev).toEqual({ status: 'DONE', amount: '2000' });

    const other = (await until(owner, refused.id, (o) => o.status === 'HELD_FOR_APPROVAL', 'the second occurrence held')).occurrences[0];
    expect((await decide(other.approvalRequestId, 'reject')).status).toBe(200);
    const rejected = (await read(owner, refused.id)).body.occurrences[0];
    expect(rejected.approval).toEqual({ status: 'REJECTED', decision: 'REJECTED', decidedAt: expect.any(String), reason: null, tevId: null, payoutId: null });
    expect(await balanceOf(owner.account.id)).toBe(8_000n);
  });

  test('limits: checked when the occurrence runs; a refusal by a limit fails it without retries', async () => {
    const limited = await newTenant(platform);
    tenants.push(limited);
    const [h, to] = await Promise.all([onboarded(platform, limited), onboarded(platform, limited)]);
    await fund(platform, limited, h.account.id, 100_000);
    // Due 10 s ahead: the operator command below (a process of its own, slow under CI's load) must set the limit first.
    const s = (await schedule(h, tevTo(to, '5000', 10))).body;
    // Set after the schedule was made: in force when it runs.
    const values = ['--per-transaction-cents', '4000', '--day-cents', '100000', '--night-cents', '100000', '--month-cents', '1000000'];
    await adminOk(platform.env, 'limits:set', '--tenant', limited, '--holder-type', 'PERSON', '--channel', 'TEV', ...values);
    const refusedOrPaid = (o: any) => {
      if (o.status === 'PAID') throw new Error('the occurrence was paid before the limit was set: the operator command took longer than its lead');
      return o.status === 'FAILED';
    };
    const failed = (await until(h, s.id, refusedOrPaid, 'the occurrence refused')).occurrences[0];
    expect(failed).toMatchObject({ attempts: 0, reason: 'LIMIT_EXCEEDED' });
    expect(await balanceOf(h.account.id)).toBe(100_000n);
    expect((await eventsOf(s.id)).map((e) => [e.type, e.data.reason])).toEqual([['payment.scheduled.failed', 'LIMIT_EXCEEDED']]);
  });
});

describe('a creation retried with its Idempotency-Key', () => {
  test('after its due time, once paid: the same 201 and schedule on both APIs; another body under the key is 409', async () => {
    const key = randomUUID();
    const body = tevTo(receiver, '61', 2);
    const first = await schedule(payer, body, { key });
    expect(first.status).toBe(201);
    await until(payer, first.body.id, (o) => o.status === 'PAID', 'the occurrence paid');
    const again = await schedule(payer, body, { key });
    expect([again.status, again.body.id, again.body.occurrences[0].status]).toEqual([201, first.body.id, 'PAID']);
    const other = await schedule(payer, { ...body, amountCents: '62' }, { key });
    expect([other.status, other.body.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);

    const pixAccountId = await pixAccountIdOf(platform, tenantId, payer.document);
    const v1 = `${platform.apiUrl}/v1/pix-accounts/${pixAccountId}/scheduled-payments`;
    const headers = { authorization: `Bearer ${await apiKey(platform, tenantId, pixAccountId)}`, 'idempotency-key': randomUUID() };
    const integrationBody = tevTo(receiver, '63', 2);
    const made = await http('POST', v1, { body: integrationBody, headers });
    expect(made.status).toBe(201);
    await until(payer, made.body.id, (o) => o.status === 'PAID', 'the integration occurrence paid');
    const retried = await http('POST', v1, { body: integrationBody, headers });
    expect([retried.status, retried.body.id]).toEqual([201, made.body.id]);
    const reused = await http('POST', v1, { body: { ...integrationBody, amountCents: '64' }, headers });
    expect([reused.status, reused.body.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await transfersOf(first.body.id)).map((t) => t.status)).toEqual(['DONE']);
    expect((await transfersOf(made.body.id)).map((t) => t.status)).toEqual(['DONE']);
  });
});

describe('durable', () => {
  test('the worker killed at the due time: the occurrence is paid exactly once after a worker is back', async () => {
    const before = await balanceOf(payer.account.id);
    const s = (await schedule(payer, tevTo(receiver, '4321', 3))).body;
    await new Promise((resolve) => setTimeout(resolve, Date.parse(s.occurrences[0].dueAt) - Date.now()));
    await platform.killWorker();
    await platform.startWorker();
    await until(payer, s.id, (o) => o.status === 'PAID', 'the occurrence paid after the restart');
    expect((await transfersOf(s.id)).map((t) => t.status)).toEqual(['DONE']);
    expect(await balanceOf(payer.account.id)).toBe(before - 4321n);
    expect(await eventsOf(s.id)).toHaveLength(1);
  });

  test('no worker at the due time: the occurrence runs as soon as one is back, and says it ran late', async () => {
    const s = (await schedule(payer, tevTo(receiver, '55', 2))).body;
    await platform.stopWorker();
    try {
      await new Promise((resolve) => setTimeout(resolve, Date.parse(s.occurrences[0].dueAt) - Date.now() + LATE_AFTER_MS + 1_000));
      expect((await read(payer, s.id)).body.occurrences[0].status).toBe('SCHEDULED');
    } finally {
      await platform.startWorker();
    }
    const paid = (await until(payer, s.id, (o) => o.status === 'PAID', 'the late occurrence paid')).occurrences[0];
    expect(paid.late).toBe(true);
    expect(Date.parse(paid.startedAt) - Date.parse(paid.dueAt)).toBeGreaterThan(LATE_AFTER_MS);
    expect((await eventsOf(s.id))[0]!.data).toMatchObject({ late: true });
    expect(await transfersOf(s.id)).toHaveLength(1);
  });
});

describe('the integration API, for the accounts of its key', () => {
  test('create (idempotent by key), list, read, cancel an occurrence and the schedule', async () => {
    const pixAccountId = await pixAccountIdOf(platform, tenantId, payer.document);
    const key = await apiKey(platform, tenantId, pixAccountId);
    const v1 = `${platform.apiUrl}/v1/pix-accounts/${pixAccountId}/scheduled-payments`;
    const auth = (idempotencyKey?: string) => ({ authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) });
    const start = addDays(inSaoPaulo(0).date, 3);
    const body = { kind: 'TEV', branch: '1', account: `000${receiver.account.number}`, amountCents: '2500', date: start, time: '08:00', recurrence: { frequency: 'MONTHLY', count: 3 } };
    const idem = randomUUID();
    const created = await http('POST', v1, { body, headers: auth(idem) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ branch: '0001', account: receiver.account.number, status: 'ACTIVE' });
    expect((await http('POST', v1, { body, headers: auth(idem) })).body.id).toBe(created.body.id);
    const reused = await http('POST', v1, { body: { ...body, amountCents: '2501' }, headers: auth(idem) });
    expect([reused.status, reused.body.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await http('POST', v1, { body, headers: auth() })).status).toBe(400);
    // Refused as on the holder API, nothing recorded: a past date, cents that are not whole, control characters.
    const rows = await scheduleRows(payer.account.id);
    for (const bad of [{ date: addDays(inSaoPaulo(0).date, -1) }, { amountCents: '25.00' }, { amountCents: 25.5 }, { description: 'x\u001by' }]) {
      const res = await http('POST', v1, { body: { ...body, ...bad }, headers: auth(randomUUID()) });
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect(await scheduleRows(payer.account.id)).toBe(rows);

    const listed = await http('GET', v1, { headers: auth() });
    expect(listed.body.scheduledPayments.map((s: any) => s.id)).toContain(created.body.id);
    // The holder sees it too: one account, two ways in.
    expect((await read(payer, created.body.id)).body.id).toBe(created.body.id);
    const second = created.body.occurrences[1].date;
    expect((await http('DELETE', `${v1}/${created.body.id}/occurrences/${second}`, { headers: auth() })).body.occurrences[1].status).toBe('CANCELLED');
    const cancelled = await http('DELETE', `${v1}/${created.body.id}`, { headers: auth() });
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await http('GET', `${v1}/${created.body.id}`, { headers: auth() })).body.occurrences.map((o: any) => o.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);

    // Another account: not in the key's scope.
    const other = `${platform.apiUrl}/v1/pix-accounts/${await pixAccountIdOf(platform, tenantId, receiver.document)}/scheduled-payments`;
    for (const res of [await http('POST', other, { body, headers: auth(randomUUID()) }), await http('GET', other, { headers: auth() }), await http('GET', `${other}/${created.body.id}`, { headers: auth() })]) {
      expect([res.status, res.body.code]).toEqual([403, 'ACCOUNT_NOT_IN_KEY_SCOPE']);
    }
  });
});

describe('refused, with nothing changed', () => {
  let before: number;
  let outsider: Onboarded;
  let theirs: any;
  beforeAll(async () => {
    outsider = await onboarded(platform, tenantId);
    theirs = (await schedule(outsider, tevTo(receiver, '100', 3600))).body;
    before = await scheduleRows(payer.account.id);
  });

  const yesterday = () => addDays(inSaoPaulo(0).date, -1);
  const later = () => addDays(inSaoPaulo(0).date, 5);
  const tev = (extra: Record<string, unknown>) => ({ kind: 'TEV', branch: '0001', account: '1', amountCents: '100', date: later(), ...extra });

  test.each([
    ['a past date', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), date: yesterday() })],
    ['today at a time that passed', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), ...inSaoPaulo(-60_000) })],
    ['a date that is not one', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), date: '2027-02-30' })],
    ['a time that is not one', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), time: '24:00' })],
    ['cents with a fraction', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), amountCents: '10.50' })],
    ['a JSON number with a fraction', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), amountCents: 10.5 })],
    ['a zero amount', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), amountCents: 0 })],
    ['control characters in the description', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), description: 'a\u0000b' })],
    ['control characters in the key', 400, 'VALIDATION_ERROR', () => ({ kind: 'PIX_KEY', pixKey: 'a\u0007b@example.com', pixKeyType: 'EMAIL', amountCents: '100', date: later() })],
    ['a key not of its type', 400, 'VALIDATION_ERROR', () => ({ kind: 'PIX_KEY', pixKey: 'not-an-email', pixKeyType: 'EMAIL', amountCents: '100', date: later() })],
    ['both count and until', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), recurrence: { frequency: 'WEEKLY', count: 2, until: addDays(later(), 30) } })],
    ['neither count nor until', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), recurrence: { frequency: 'WEEKLY' } })],
    ['a day of the month for a weekly recurrence', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), recurrence: { frequency: 'WEEKLY', dayOfMonth: 3, count: 2 } })],
    ['more than five years', 400, 'VALIDATION_ERROR', () => tev({ account: receiverNumber(), recurrence: { frequency: 'MONTHLY', count: 61 } })],
    ['a TEV above the largest one (TEV_MAX_AMOUNT_CENTS), refused now rather than when due', 422, 'AMOUNT_ABOVE_LIMIT', () => tev({ account: receiverNumber(), amountCents: '100000001' })],
    ['an account the tenant does not have', 400, 'DESTINATION_NOT_FOUND', () => tev({ account: '999999999' })],
    ['its own account', 400, 'SAME_ACCOUNT', () => tev({ account: payer.account.number })],
    ['no PIN', 400, 'VALIDATION_ERROR', () => ({ ...tev({ account: receiverNumber() }), pin: undefined })],
    ['a wrong PIN', 403, 'INVALID_PIN', () => ({ ...tev({ account: receiverNumber() }), pin: '9137' })],
  ])('%s: %i %s', async (_case, status, code, body) => {
    const res = await schedule(payer, body());
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(await scheduleRows(payer.account.id)).toBe(before);
  });

  test("another holder's account and schedules: 404 on every route, theirs untouched", async () => {
    const res = [
      await schedule(payer, tevTo(receiver, '100', 3600), { accountId: outsider.account.id }),
      await list(payer, '', outsider.account.id),
      await read(payer, theirs.id, outsider.account.id),
      await read(payer, theirs.id),
      await cancel(payer, theirs.id, outsider.account.id),
      await cancel(payer, theirs.id),
      await cancelOne(payer, theirs.id, theirs.date, outsider.account.id),
      await cancelOne(payer, theirs.id, theirs.date),
    ];
    expect(res.map((r) => [r.status, r.body.code])).toEqual(Array(8).fill([404, 'NOT_FOUND']));
    expect((await read(outsider, theirs.id)).body.status).toBe('ACTIVE');
    expect(await scheduleRows(payer.account.id)).toBe(before);
  });

  test('ids and dates that are not: 400', async () => {
    expect((await read(payer, 'abc')).body.code).toBe('VALIDATION_ERROR');
    expect((await cancel(payer, 'abc')).body.code).toBe('VALIDATION_ERROR');
    expect((await cancelOne(payer, theirs.id, '2027-13-01')).body.code).toBe('VALIDATION_ERROR');
    expect((await cancelOne(payer, theirs.id, '2027-01-01%00')).body.code).toBe('VALIDATION_ERROR');
    expect((await list(payer, `?cursor=forged.${'x'.repeat(43)}`)).status).toBe(400);
  });
});

const receiverNumber = () => receiver.account.number;
