/**
 * Issue 23, item 3: the Pix provider's notifications, received over HTTP, signed Standard Webhooks style. The sandbox
 * PSP settles only after 10 minutes here, so every outcome below comes from a notification, not from the workflow's
 * polling; the test plays the provider, signing with the standardwebhooks library.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newCpf, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** Above what this file sends from its own address in a minute; the rate-limit test sends from another. */
const RATE_LIMIT = 100;
/** The api applies one notification at a time and lets four wait: the five sent at once below all fit. */
const APPLIED_AT_ONCE = 1;
const WAITING_AT_MOST = 4;
const provider = new Webhook(SECRET);
/**
 * Every webhook-id this file sends starts with it: what a refused notification must not have recorded is counted among
 * this file's, since other files running beside it receive notifications of their own into the same table.
 */
const MESSAGE_PREFIX = `msg_${randomBytes(4).toString('hex')}_`;
const messageId = (name: string = randomUUID()) => `${MESSAGE_PREFIX}${name}`;

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
beforeAll(async () => {
  platform = await startPlatform({
    SANDBOX_PIX_SETTLE_MS: '600000',
    PIX_PROVIDER_WEBHOOK_SECRET: SECRET,
    PIX_PROVIDER_NOTIFICATIONS_MAX_PER_MINUTE: String(RATE_LIMIT),
    PIX_PROVIDER_NOTIFICATIONS_CONCURRENCY: String(APPLIED_AT_ONCE),
    PIX_PROVIDER_NOTIFICATIONS_MAX_WAITING: String(WAITING_AT_MOST),
  });
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-out-cents', '100');
  alice = await onboarded(platform, tenantId);
  await fund(platform, tenantId, alice.account.id, 1_000_000);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const notificationsUrl = () => `${platform.apiUrl}/v1/pix/provider/notifications`;

interface Sent {
  id?: string;
  at?: Date;
  /** The headers as sent, replacing the signed ones (a forged or missing signature). */
  headers?: Record<string, string>;
}

/** Sends one notification as the provider does: the body's exact bytes, signed with their id and timestamp. */
function notify(body: unknown, sent: Sent = {}) {
  const id = sent.id ?? messageId();
  const at = sent.at ?? new Date();
  const raw = JSON.stringify(body);
  const signed = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': provider.sign(id, at, raw) };
  return http('POST', notificationsUrl(), { body: raw, headers: { ...signed, ...sent.headers } });
}

/** A payment by key, debited and PROCESSING, with the end-to-end id the sandbox PSP gave it on submission. */
async function processingPayout(amount: number): Promise<{ payoutId: string; endToEndId: string }> {
  const res = await http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: alice.account.id, pin: alice.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
    headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': randomUUID() },
  });
  expect(res.status).toBe(201);
  const payoutId = res.body.payout.payoutId;
  const [submitted] = await waitFor(async () => {
    const rows = await sql('select end_to_end_id from sandbox_psp_payout where payout_id = $1', [payoutId]);
    return rows.length > 0 ? rows : undefined;
  }, 30_000, 'the payout submitted to the sandbox PSP');
  return { payoutId, endToEndId: submitted.end_to_end_id };
}

/** The payout locked by a transaction of the test's own, until `release`. */
async function lockedPayout(payoutId: string): Promise<{ pid: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  const [{ pid }] = (await client.query('select pg_backend_pid() as pid')).rows;
  await client.query('begin');
  await client.query('select 1 from pix_payout where id = $1 for update', [payoutId]);
  let released = false;
  return {
    pid,
    async release() {
      if (released) return;
      released = true;
      await client.query('rollback');
      await client.end();
    },
  };
}

const payout = (id: string) => http('GET', `${platform.holderUrl}/accounts/${alice.account.id}/payouts/${id}`, { headers: tenantHeaders(tenantId, alice.token) });
const eventsOf = (payoutId: string) => sql(`select type, data from event_outbox where data->>'payoutId' = $1 order by created_at, id`, [payoutId]);
const returnEndToEndId = () => `D99999999${new Date().toISOString().replace(/\D/g, '').slice(0, 12)}${randomBytes(8).toString('hex').slice(0, 11)}`;

/** What a refused notification must leave as it was: the balance and every movement of the tenant. */
async function moneyOf(accountId: string) {
  const [movements] = await sql(`select count(*)::int as n from movement where tenant_id = $1`, [tenantId]);
  const [notifications] = await sql('select count(*)::int as n from pix_provider_notification where starts_with(id, $1)', [MESSAGE_PREFIX]);
  return { balance: await balanceOf(accountId), movements: movements.n, notifications: notifications.n };
}

describe('payout notifications', () => {
  test('payout.settled: POSTED with the end-to-end id, pix.payout.succeeded once; sent again, 200 duplicate with the same result', async () => {
    const { payoutId, endToEndId } = await processingPayout(10);
    const before = await balanceOf(alice.account.id);
    const body = { type: 'payout.settled', data: { payoutId, endToEndId, settledAt: new Date().toISOString() } };
    const id = messageId();
    const first = await notify(body, { id });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'applied', notificationId: id, type: 'payout.settled', result: { payoutId, payoutStatus: 'POSTED', refundedCents: '0' } });
    const again = await notify(body, { id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, status: 'duplicate' });

    // Another notification of the same settlement (another id): the payout is final, nothing applies twice.
    const other = await notify(body);
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ status: 'applied', result: { payoutId, payoutStatus: 'POSTED' } });

    const view = (await payout(payoutId)).body;
    expect(view).toMatchObject({ status: 'POSTED', metadata: expect.objectContaining({ endToEndId }) });
    expect(view.entries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', '-1000'], ['FEE', '-100']]);
    expect((await eventsOf(payoutId)).map((e) => e.type)).toEqual(['pix.payout.succeeded']);
    expect(await balanceOf(alice.account.id)).toBe(before);
  });

  test('payout.returned, partial then the rest: REVERSAL entries, REFUNDED, pix.payout.refunded for each, balances exact; each return once', async () => {
    const { payoutId, endToEndId } = await processingPayout(20);
    await notify({ type: 'payout.settled', data: { payoutId, endToEndId, settledAt: new Date().toISOString() } });
    const before = await balanceOf(alice.account.id);
    const part = { type: 'payout.returned', data: { payoutId, endToEndId, returnEndToEndId: returnEndToEndId(), amountCents: '700', returnedAt: new Date().toISOString() } };
    const partial = await notify(part);
    expect(partial.body).toMatchObject({ status: 'applied', result: { payoutId, payoutStatus: 'REFUNDED', refundedCents: '700' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 700n);
    // The same return under another notification id: credited once, by its end-to-end id.
    expect((await notify(part)).body).toMatchObject({ status: 'applied', result: { refundedCents: '700' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 700n);

    const rest = await notify({ type: 'payout.returned', data: { payoutId, endToEndId, returnEndToEndId: returnEndToEndId(), amountCents: '1300', returnedAt: new Date().toISOString() } });
    expect(rest.body).toMatchObject({ status: 'applied', result: { payoutStatus: 'REFUNDED', refundedCents: '2000' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 2000n);
    const view = (await payout(payoutId)).body;
    expect(view.status).toBe('REFUNDED');
    expect(view.entries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', '-2000'], ['FEE', '-100'], ['REVERSAL', '700'], ['REVERSAL', '1300']]);
    const refunds = (await eventsOf(payoutId)).filter((e) => e.type === 'pix.payout.refunded');
    expect(refunds.map((e) => [e.data.refundAmountCents, e.data.endToEndId])).toEqual([['700', endToEndId], ['1300', endToEndId]]);

    // Nothing is left to return: one cent more is refused and moves nothing.
    const money = await moneyOf(alice.account.id);
    const above = await notify({ type: 'payout.returned', data: { payoutId, endToEndId, returnEndToEndId: returnEndToEndId(), amountCents: '1', returnedAt: new Date().toISOString() } });
    expect(above.status).toBe(422);
    expect(above.body.code).toBe('RETURN_EXCEEDS_PAYOUT');
    expect(await moneyOf(alice.account.id)).toEqual(money);
  });

  test('a return 30 days after settlement, of a payout the platform had not seen settle, settles it and posts once', async () => {
    const { payoutId, endToEndId } = await processingPayout(30);
    const before = await balanceOf(alice.account.id);
    const settledAt = new Date();
    const returnedAt = new Date(settledAt.getTime() + 30 * 86_400_000);
    const body = { type: 'payout.returned', data: { payoutId, endToEndId, returnEndToEndId: returnEndToEndId(), amountCents: '3000', returnedAt: returnedAt.toISOString(), settledAt: settledAt.toISOString() } };
    expect((await notify(body)).body).toMatchObject({ status: 'applied', result: { payoutStatus: 'REFUNDED', refundedCents: '3000' } });
    expect((await notify(body)).body).toMatchObject({ status: 'applied', result: { payoutStatus: 'REFUNDED', refundedCents: '3000' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 3000n);
    // Settled and returned in one transaction: its two events share a timestamp, so they are compared as a set.
    const events = await eventsOf(payoutId);
    expect(events.map((e) => e.type).sort()).toEqual(['pix.payout.refunded', 'pix.payout.succeeded']);
    expect(events.find((e) => e.type === 'pix.payout.refunded')!.data).toMatchObject({ occurredAt: returnedAt.toISOString(), refundAmountCents: '3000' });
  });

  test('payout.failed on a processing payout: amount and fee back, FAILED; a later settlement of it applies nothing', async () => {
    const { payoutId, endToEndId } = await processingPayout(40);
    const before = await balanceOf(alice.account.id);
    const failed = await notify({ type: 'payout.failed', data: { payoutId, endToEndId, reason: 'Conta do recebedor encerrada' } });
    expect(failed.body).toMatchObject({ status: 'applied', result: { payoutStatus: 'FAILED' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 4100n);
    const view = (await payout(payoutId)).body;
    expect(view.status).toBe('FAILED');
    expect(view.entries.map((e: any) => [e.kind, e.amount])).toEqual([['PRIMARY', '-4000'], ['FEE', '-100'], ['REVERSAL', '4000'], ['REVERSAL', '100']]);
    expect(await eventsOf(payoutId)).toEqual([expect.objectContaining({ type: 'pix.payout.failed', data: expect.objectContaining({ reason: 'Conta do recebedor encerrada' }) })]);

    const late = await notify({ type: 'payout.settled', data: { payoutId, endToEndId, settledAt: new Date().toISOString() } });
    expect(late.body).toMatchObject({ status: 'applied', result: { payoutStatus: 'FAILED' } });
    const returned = await notify({ type: 'payout.returned', data: { payoutId, endToEndId, returnEndToEndId: returnEndToEndId(), amountCents: '100', returnedAt: new Date().toISOString() } });
    expect(returned.status).toBe(422);
    expect(returned.body.code).toBe('PAYOUT_NOT_RETURNABLE');
    expect(await balanceOf(alice.account.id)).toBe(before + 4100n);
    expect((await eventsOf(payoutId)).map((e) => e.type)).toEqual(['pix.payout.failed']);
  });

  test('payout.cancelled: amount and fee back, CANCELLED, pix.payout.cancelled', async () => {
    const { payoutId, endToEndId } = await processingPayout(50);
    const before = await balanceOf(alice.account.id);
    expect((await notify({ type: 'payout.cancelled', data: { payoutId, endToEndId, reason: 'Cancelado pelo PSP' } })).body).toMatchObject({ result: { payoutStatus: 'CANCELLED' } });
    expect(await balanceOf(alice.account.id)).toBe(before + 5100n);
    expect((await eventsOf(payoutId)).map((e) => e.type)).toEqual(['pix.payout.cancelled']);
  });
});

describe('sent at once', () => {
  test('the same notification five times at once: applied once, the others duplicate; the same settlement under five ids moves money once', async () => {
    const { payoutId, endToEndId } = await processingPayout(70);
    const body = { type: 'payout.settled', data: { payoutId, endToEndId, settledAt: new Date().toISOString() } };
    const id = messageId();
    const answers = await Promise.all(Array.from({ length: 5 }, () => notify(body, { id })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((a) => a.body.status).sort()).toEqual(['applied', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    const others = await Promise.all(Array.from({ length: 5 }, () => notify(body)));
    expect(others.map((a) => a.body.result.payoutStatus)).toEqual(['POSTED', 'POSTED', 'POSTED', 'POSTED', 'POSTED']);
    expect((await eventsOf(payoutId)).map((e) => e.type)).toEqual(['pix.payout.succeeded']);
  });

  test('one incoming Pix notified under five ids at once is credited once', async () => {
    const before = await balanceOf(alice.account.id);
    const endToEndId = `E12345678${new Date().toISOString().replace(/\D/g, '').slice(0, 12)}${randomBytes(8).toString('hex').slice(0, 11)}`;
    const payer = { name: 'Pagador Concorrente', document: newCpf(), ispb: '12345678', institution: 'Banco Exemplo S.A.', branch: '0001', account: '7654321' };
    const body = { type: 'pix.received', data: { endToEndId, amountCents: '1234', receiver: { branch: alice.account.agency, account: alice.account.number }, payer } };
    const answers = await Promise.all(Array.from({ length: 5 }, () => notify(body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.result.movementId)).size).toBe(1);
    expect(await balanceOf(alice.account.id)).toBe(before + 1234n);
  });
});

describe('a burst', () => {
  test('past the notifications applied at once and those waiting, 503 TEMPORARILY_UNAVAILABLE with nothing recorded; sent again, applied', async () => {
    // One after the other: a holder's PIN checks in flight at once are bounded.
    const payouts: { payoutId: string; endToEndId: string }[] = [];
    for (const amount of [81, 82, 83, 84, 85, 86]) payouts.push(await processingPayout(amount));
    const settled = ({ payoutId, endToEndId }: { payoutId: string; endToEndId: string }) => ({ type: 'payout.settled', data: { payoutId, endToEndId, settledAt: new Date().toISOString() } });
    const holder = await lockedPayout(payouts[0]!.payoutId);
    try {
      // The first is applied, and waits inside for the payout this test holds locked.
      const first = notify(settled(payouts[0]!));
      const blocked = () => sql('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holder.pid]);
      await waitFor(async () => ((await blocked()).length > 0 ? true : undefined), 10_000, 'the first notification waiting for the payout lock');
      // Five more at once: four wait their turn in the api, the one that arrives last is refused at once.
      const money = await moneyOf(alice.account.id);
      const ids = payouts.slice(1).map(() => messageId());
      const answered: number[] = [];
      const others = payouts.slice(1).map((p, i) => notify(settled(p), { id: ids[i] }).then((a) => (answered.push(i), a)));
      const { refusedIndex } = await waitFor(async () => answered.length > 0 && { refusedIndex: answered[0]! }, 10_000, 'the refused notification answered');
      const refused = await others[refusedIndex]!;
      expect([refused.status, refused.body.code]).toEqual([503, 'TEMPORARILY_UNAVAILABLE']);
      expect(answered).toEqual([refusedIndex]);
      expect(await moneyOf(alice.account.id)).toEqual(money);
      await holder.release();
      const applied = await Promise.all([first, ...others.filter((_, i) => i !== refusedIndex)]);
      expect(applied.map((a) => [a.status, a.body.result.payoutStatus])).toEqual(Array(5).fill([200, 'POSTED']));
      // The provider sends the refused one again under its id: applied now.
      const again = await notify(settled(payouts[refusedIndex + 1]!), { id: ids[refusedIndex] });
      expect(again.body).toMatchObject({ status: 'applied', result: { payoutStatus: 'POSTED' } });
    } finally {
      await holder.release();
    }
  });
});

describe('incoming Pix', () => {
  test('pix.received credits once when sent twice (and again under another id), with pix.in.received', async () => {
    const before = await balanceOf(alice.account.id);
    const endToEndId = `E12345678${new Date().toISOString().replace(/\D/g, '').slice(0, 12)}${randomBytes(8).toString('hex').slice(0, 11)}`;
    const payer = { name: 'Maria Pagadora', document: newCpf(), ispb: '12345678', institution: 'Banco Exemplo S.A.', branch: '0001', account: '1234567' };
    const body = { type: 'pix.received', data: { endToEndId, amountCents: '2500', receiver: { branch: alice.account.agency, account: alice.account.number }, payer } };
    const id = messageId();
    const first = await notify(body, { id });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'applied', notificationId: id, type: 'pix.received', result: { movementId: expect.any(String), endToEndId, amountCents: '2500', feeCents: '0' } });
    expect((await notify(body, { id })).body).toEqual({ ...first.body, status: 'duplicate' });
    expect((await notify(body)).body).toMatchObject({ status: 'applied', result: first.body.result });
    expect(await balanceOf(alice.account.id)).toBe(before + 2500n);
    const events = await sql(`select data from event_outbox where type = 'pix.in.received' and data->>'endToEndId' = $1`, [endToEndId]);
    expect(events).toEqual([{ data: expect.objectContaining({ movementId: first.body.result.movementId, amountCents: '2500', payerName: payer.name, payerInstitution: payer.institution }) }]);
  });

  test('an unknown receiver account is 404 RECEIVER_NOT_FOUND and moves nothing', async () => {
    const money = await moneyOf(alice.account.id);
    const res = await notify({ type: 'pix.received', data: { endToEndId: 'E12345678202611241200aB3dE5fG7hJ', amountCents: '100', receiver: { branch: '0001', account: '9' }, payer: { name: 'X', document: newCpf(), ispb: '12345678', institution: 'Banco', branch: '0001', account: '1' } } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('RECEIVER_NOT_FOUND');
    expect(await moneyOf(alice.account.id)).toEqual(money);
  });
});

describe('refused notifications move nothing', () => {
  let target: { payoutId: string; endToEndId: string };
  let body: unknown;
  beforeAll(async () => {
    target = await processingPayout(60);
    body = { type: 'payout.failed', data: { ...target, reason: 'Recusado' } };
  });

  const refusedWith = async (status: number, code: string, send: () => Promise<{ status: number; body: any }>) => {
    const money = await moneyOf(alice.account.id);
    const res = await send();
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(await moneyOf(alice.account.id)).toEqual(money);
    expect((await payout(target.payoutId)).body.status).toBe('PROCESSING');
  };

  test('a forged signature (another secret) is 401 INVALID_SIGNATURE', async () => {
    const id = messageId();
    const at = new Date();
    const forged = new Webhook(`whsec_${randomBytes(32).toString('base64')}`).sign(id, at, JSON.stringify(body));
    await refusedWith(401, 'INVALID_SIGNATURE', () => notify(body, { id, at, headers: { 'webhook-signature': forged } }));
  });

  test('unsigned: no webhook-signature is 401, no webhook-id or timestamp is 400', async () => {
    await refusedWith(401, 'INVALID_SIGNATURE', () => http('POST', notificationsUrl(), { body, headers: { 'webhook-id': messageId('unsigned'), 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) } }));
    await refusedWith(400, 'VALIDATION_ERROR', () => http('POST', notificationsUrl(), { body }));
  });

  test.each([
    ['6 minutes old', -360],
    ['6 minutes ahead', 360],
  ])('a timestamp %s, correctly signed, is 401 INVALID_SIGNATURE', async (_, seconds) => {
    await refusedWith(401, 'INVALID_SIGNATURE', () => notify(body, { at: new Date(Date.now() + seconds * 1000) }));
  });

  test('a replay with an altered body under the old signature is 401 INVALID_SIGNATURE', async () => {
    const id = messageId();
    const at = new Date();
    const signature = provider.sign(id, at, JSON.stringify(body));
    const altered = JSON.stringify({ type: 'payout.settled', data: { ...target, settledAt: at.toISOString() } });
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
    await refusedWith(401, 'INVALID_SIGNATURE', () => http('POST', notificationsUrl(), { body: altered, headers }));
    // The same bytes with whitespace changed are other bytes: the signature is over the raw body, not its JSON value.
    await refusedWith(401, 'INVALID_SIGNATURE', () => http('POST', notificationsUrl(), { body: ` ${JSON.stringify(body)}`, headers }));
  });

  test('the same webhook-id with another body, signed, is 409 NOTIFICATION_ID_REUSED', async () => {
    const id = messageId();
    const other = await processingPayout(62);
    expect((await notify({ type: 'payout.cancelled', data: { ...other, reason: 'Cancelado' } }, { id })).status).toBe(200);
    await refusedWith(409, 'NOTIFICATION_ID_REUSED', () => notify(body, { id }));
  });

  test('an unknown payout is 404 PAYOUT_NOT_FOUND; another end-to-end id than the payout settled with is 422', async () => {
    await refusedWith(404, 'PAYOUT_NOT_FOUND', () => notify({ type: 'payout.settled', data: { payoutId: `p${'0'.repeat(23)}`, endToEndId: target.endToEndId, settledAt: new Date().toISOString() } }));
    const posted = await processingPayout(63);
    await notify({ type: 'payout.settled', data: { ...posted, settledAt: new Date().toISOString() } });
    const wrong = { ...posted, endToEndId: `E00000000${posted.endToEndId.slice(9, 21)}zzzzzzzzzzz` };
    const money = await moneyOf(alice.account.id);
    const res = await notify({ type: 'payout.returned', data: { ...wrong, returnEndToEndId: returnEndToEndId(), amountCents: '100', returnedAt: new Date().toISOString() } });
    expect([res.status, res.body.code]).toEqual([422, 'END_TO_END_ID_MISMATCH']);
    expect(await moneyOf(alice.account.id)).toEqual(money);
  });

  test(`more than ${RATE_LIMIT} refused a minute from one address: 429 RATE_LIMITED; a genuine one from it is still applied`, async () => {
    // Twice the limit and one: however the minutes' windows fall, one of them counts more than the limit.
    const headers = { 'x-forwarded-for': '203.0.113.77', 'webhook-id': messageId('flood'), 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,Zm9yZ2Vk' };
    const money = await moneyOf(alice.account.id);
    const statuses: number[] = [];
    for (let i = 0; i < 2 * RATE_LIMIT + 1; i++) statuses.push((await http('POST', notificationsUrl(), { body, headers })).status);
    expect(new Set(statuses)).toEqual(new Set([401, 429]));
    expect(await moneyOf(alice.account.id)).toEqual(money);
    // The limit counts refused notifications: a genuine one from that address, signed, is applied all the same.
    const other = await processingPayout(64);
    const genuine = await notify({ type: 'payout.settled', data: { ...other, settledAt: new Date().toISOString() } }, { headers: { 'x-forwarded-for': '203.0.113.77' } });
    expect(genuine.status).toBe(200);
    expect(genuine.body.result).toMatchObject({ payoutId: other.payoutId, payoutStatus: 'POSTED' });
  });

  test('a body that is not a notification is 400 VALIDATION_ERROR, even signed', async () => {
    await refusedWith(400, 'VALIDATION_ERROR', () => notify({ type: 'payout.exploded', data: target }));
  });
});
