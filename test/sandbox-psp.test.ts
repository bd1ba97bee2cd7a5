/**
 * Issue 23, item 4: the sandbox PSP is a service of its own, behind a real HTTP boundary. The platform reaches it only
 * through its API (`src/pix/http-provider.ts`), and it tells the platform what happened with signed notifications to
 * `POST /v1/pix/provider/notifications`. Everything below goes over HTTP between real processes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

const PIX_FEE = 100n;

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '400', PIX_NOTIFICATION_WAIT_MS: '1000' });
  tenantId = await newTenant(platform);
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-out-cents', String(PIX_FEE));
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  await fund(platform, tenantId, alice.account.id, 1_000_000);
}, 90_000);
afterAll(async () => {
  if (tenantId) await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

/** A call to the sandbox PSP's own API (not a platform document: plain fetch, no conformance check). */
async function psp(method: 'GET' | 'POST', path: string, body?: unknown, credential: string | null = platform.env.PIX_PROVIDER_API_KEY!) {
  const res = await fetch(`${platform.pspUrl}${path}`, {
    method,
    headers: { ...(credential === null ? {} : { authorization: `Bearer ${credential}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const payKey = (amount: number, who = alice) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: who.account.id, pin: who.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
    headers: { ...tenantHeaders(who.tenantId, who.token), 'idempotency-key': randomUUID() },
  });
const payout = (id: string, who = alice) => http('GET', `${platform.holderUrl}/accounts/${who.account.id}/payouts/${id}`, { headers: tenantHeaders(who.tenantId, who.token) });
const payoutIn = (id: string, status: string | string[], who = alice) =>
  waitFor(async () => {
    const view = (await payout(id, who)).body;
    return [status].flat().includes(view.status) ? view : undefined;
  }, 60_000, `payout ${id} ${status}`);
const pixPayout = async (id: string) => (await sql(`select status, refunded_cents::text as refunded, reason, end_to_end_id from pix_payout where id = $1`, [id]))[0];
const notificationsOf = async (payoutId: string) => (await psp('GET', `/sandbox/notifications?payoutId=${payoutId}`)).body.notifications as any[];
const notificationTypes = async (payoutId: string, status: string) => (await notificationsOf(payoutId)).filter((n) => n.status === status).map((n) => n.type).sort();

describe('the PSP API', () => {
  test('every call but /health needs the bearer credential: missing or wrong is 401, compared whole', async () => {
    const key = platform.env.PIX_PROVIDER_API_KEY!;
    for (const credential of [null, 'wrong', `${key}x`, key.slice(0, -1)]) {
      const res = await psp('GET', '/dict/keys/EMAIL/loja@example.com', undefined, credential);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
    expect((await psp('POST', '/payouts', { payoutId: 'x' }, 'wrong')).status).toBe(401);
    expect((await fetch(`${platform.pspUrl}/health`)).status).toBe(200);
  });

  test('the directory answers a key with its account and owner; an invalid key is 400', async () => {
    const res = await psp('GET', '/dict/keys/EMAIL/loja@example.com');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      key: 'loja@example.com',
      keyType: 'EMAIL',
      account: { participant: '99999999', participantName: 'Banco Sandbox S.A.', branch: '0001', accountNumber: expect.stringMatching(/^\d{8}$/), accountType: 'CACC' },
      owner: { type: 'NATURAL_PERSON', taxIdNumber: expect.stringMatching(/^\d{11}$/), name: expect.stringMatching(/^Recebedor Sandbox \d{4}$/) },
    });
    expect((await psp('GET', '/dict/keys/CPF/123')).status).toBe(400);
    expect((await psp('GET', '/dict/keys/NOPE/x')).body.code).toBe('VALIDATION_ERROR');
  });

  test('a payout is taken once per payoutId; read back as the provider state; bad input is 400, unknown is 404', async () => {
    const submission = {
      payoutId: `psp${randomUUID().replaceAll('-', '')}`,
      amountCents: '1500',
      receiver: { ispb: '99999999', branch: '0001', account: '12345678' },
      charge: null,
      payer: { name: 'Pagador', document: '11144477735', ispb: '00000000', institution: 'Banco Azul', branch: '0001', account: '1234567' },
    };
    const first = await psp('POST', '/payouts', submission);
    expect(first).toEqual({ status: 201, body: { payoutId: submission.payoutId, state: 'PROCESSING' } });
    expect((await psp('POST', '/payouts', submission)).status).toBe(200);
    expect((await psp('POST', '/payouts', { ...submission, amountCents: '1600' })).body.code).toBe('PAYOUT_ID_REUSED');
    const posted = await waitFor(async () => {
      const res = await psp('GET', `/payouts/${submission.payoutId}`);
      return res.body.state === 'POSTED' ? res.body : undefined;
    }, 10_000, 'the payout POSTED at the PSP');
    expect(posted).toEqual({ payoutId: submission.payoutId, state: 'POSTED', endToEndId: expect.stringMatching(/^E00000000\d{12}[A-Za-z0-9]{11}$/), settledAt: expect.any(String), refund: null });
    const bad = await psp('POST', '/payouts', { ...submission, amountCents: '12.5', receiver: { ispb: '1' } });
    expect(bad.status).toBe(400);
    expect([...new Set(bad.body.details.map((d: any) => d.path))].sort()).toEqual(['amountCents', 'receiver.account', 'receiver.branch', 'receiver.ispb']);
    expect((await psp('GET', '/payouts/never-submitted')).status).toBe(404);
  });
});

describe("every cents outcome reaches the platform's payout, notified over HTTP", () => {
  test.each([
    [',00 POSTED', 10.0, 'POSTED', 0n, ['payout.settled']],
    [',91 FAILED', 10.91, 'FAILED', 1091n + PIX_FEE, ['payout.failed']],
    [',92 CANCELLED', 10.92, 'CANCELLED', 1092n + PIX_FEE, ['payout.cancelled']],
    [',93 total return', 10.93, 'REFUNDED', 1093n, ['payout.returned', 'payout.settled']],
    [',94 half return', 10.94, 'REFUNDED', 547n, ['payout.returned', 'payout.settled']],
  ])('%s', async (_case, amount, status, givenBack, delivered) => {
    const cents = BigInt(Math.round(amount * 100));
    const before = await balanceOf(alice.account.id);
    const res = await payKey(amount);
    expect(res.status).toBe(201);
    const id = res.body.payout.payoutId;
    expect(await balanceOf(alice.account.id)).toBe(before - cents - PIX_FEE);
    const final = await payoutIn(id, status);
    if (status === 'REFUNDED') expect(await pixPayout(id)).toMatchObject({ refunded: givenBack.toString() });
    expect(final.status).toBe(status);
    expect(await balanceOf(alice.account.id)).toBe(before - cents - PIX_FEE + givenBack);
    // The PSP delivered each of them, signed, and the platform took it.
    const seen = await waitFor(async () => {
      const types = await notificationTypes(id, 'DELIVERED');
      return types.length === delivered.length ? types : undefined;
    }, 20_000, 'the notifications delivered');
    expect(seen).toEqual(delivered);
    const [received] = await sql(`select count(*)::int as n from pix_provider_notification where id = any($1)`, [(await notificationsOf(id)).map((n) => n.id)]);
    expect(received.n).toBe(delivered.length);
  });
});

describe('sandbox controls', () => {
  test('return control: part, then the rest, of a POSTED payout, each notified payout.returned; more than is left is 422', async () => {
    const id = (await payKey(20)).body.payout.payoutId;
    const posted = await payoutIn(id, 'POSTED');
    const endToEndId = posted.metadata.endToEndId;
    const before = await balanceOf(alice.account.id);

    const part = await psp('POST', '/sandbox/returns', { endToEndId, amountCents: '700' });
    expect(part).toEqual({ status: 201, body: { payoutId: id, endToEndId: expect.stringMatching(/^D99999999\d{12}[A-Za-z0-9]{11}$/), originalEndToEndId: endToEndId, amountCents: '700', returnedAt: expect.any(String) } });
    await waitFor(async () => ((await pixPayout(id)).refunded === '700' ? true : undefined), 20_000, 'the first return credited');
    expect(await balanceOf(alice.account.id)).toBe(before + 700n);
    expect((await payout(id)).body.status).toBe('REFUNDED');

    expect((await psp('POST', '/sandbox/returns', { endToEndId, amountCents: '1301' })).body.code).toBe('RETURN_EXCEEDS_PAYOUT');
    expect((await psp('POST', '/sandbox/returns', { endToEndId, amountCents: '1300' })).status).toBe(201);
    await waitFor(async () => ((await pixPayout(id)).refunded === '2000' ? true : undefined), 20_000, 'the rest credited');
    expect(await balanceOf(alice.account.id)).toBe(before + 2000n);
    const events = await sql(`select data->>'refundAmountCents' as cents from event_outbox where type = 'pix.payout.refunded' and data->>'payoutId' = $1 order by created_at`, [id]);
    expect(events.map((e) => e.cents)).toEqual(['700', '1300']);
    expect((await psp('POST', '/sandbox/returns', { endToEndId: 'E00000000202611241200aaaaaaaaaaa', amountCents: '1' })).status).toBe(404);
  });

  test("dropped notifications are never sent: the payout still ends final, by the workflow's query of the PSP", async () => {
    expect((await psp('POST', '/sandbox/notifications/drop', { count: 2 })).body).toMatchObject({ dropNext: 2 });
    const settled = (await payKey(30)).body.payout.payoutId;
    const failed = (await payKey(30.91)).body.payout.payoutId;
    const before = await balanceOf(alice.account.id);
    await payoutIn(settled, 'POSTED');
    const view = await payoutIn(failed, 'FAILED');
    expect(view.entries.length).toBeGreaterThan(0);
    expect(await balanceOf(alice.account.id)).toBe(before + 3091n + PIX_FEE);
    for (const id of [settled, failed]) {
      expect((await notificationsOf(id)).map((n) => [n.status, n.attempts])).toEqual([['DROPPED', 0]]);
    }
    expect((await psp('POST', '/sandbox/notifications/drop', { count: 0 })).body.dropNext).toBe(0);
  });

  test('delayed notifications are sent later, once due', async () => {
    await psp('POST', '/sandbox/notifications/delay', { count: 1, delayMs: 1500 });
    const id = (await payKey(40)).body.payout.payoutId;
    const [n] = await waitFor(async () => ((await notificationsOf(id)).length > 0 ? notificationsOf(id) : undefined), 20_000, 'the payout submitted');
    expect(n).toMatchObject({ type: 'payout.settled', status: 'PENDING' });
    expect(Date.parse(n.dueAt) - Date.parse(n.body.data.settledAt)).toBe(1500);
    await waitFor(async () => ((await notificationsOf(id))[0].status === 'DELIVERED' ? true : undefined), 20_000, 'the delayed notification delivered');
    await payoutIn(id, 'POSTED');
  });
});

describe('the PSP down', () => {
  test('a payment needing the directory is 503 UNAVAILABLE and moves nothing; a payout submitted while it is down waits, and settles once it is back', async () => {
    // The payment is recorded while the worker is away, so its submission happens after the PSP went down.
    await platform.stopWorker();
    const before = await balanceOf(alice.account.id);
    const res = await payKey(50);
    expect([201, 202]).toContain(res.status);
    const id = res.body.payout.payoutId;
    await platform.stopPsp();
    try {
      const refused = await payKey(1);
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('UNAVAILABLE');
      await platform.startWorker();
      await payoutIn(id, 'PROCESSING');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await sql('select 1 from sandbox_psp_payout where payout_id = $1', [id])).toEqual([]);
      expect((await pixPayout(id)).status).toBe('PROCESSING');
    } finally {
      await platform.startPsp();
    }
    await payoutIn(id, 'POSTED');
    expect(await balanceOf(alice.account.id)).toBe(before - 5000n - PIX_FEE);
  }, 120_000);
});

describe('a payment to an account of the platform itself', () => {
  test("the PSP delivers it as pix.received with the charge's txid: accepted, the payout settles; refused, it fails with why", async () => {
    const pix = await pixAccountIdOf(platform, tenantId, bob.document);
    const key = await apiKey(platform, tenantId, pix);
    const charge = (await http('POST', `${platform.apiUrl}/v1/pix-accounts/${pix}/charges`, { body: { amountCents: '2500' }, headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() } })).body;
    const scan = () =>
      http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
        body: { accountId: alice.account.id, pin: alice.pin, qrCode: charge.brCode },
        headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': randomUUID() },
      });
    const bobBefore = await balanceOf(bob.account.id);
    // Both scanned while the charge is unpaid: recorded while the worker is away, both reach the PSP once it is back.
    await platform.stopWorker();
    const answers = await Promise.all([scan(), scan()]);
    await platform.startWorker();
    const ids: string[] = answers.map((a) => a.body.payout.payoutId);
    const outcomes = await Promise.all(ids.map(async (id) => (await payoutIn(id, ['POSTED', 'FAILED'])).status));
    const first = ids[outcomes.indexOf('POSTED')]!;
    const second = ids[outcomes.indexOf('FAILED')]!;
    expect(outcomes.sort()).toEqual(['FAILED', 'POSTED']);
    expect((await pixPayout(second)).reason).toBe('Cobrança já paga');
    expect(await balanceOf(bob.account.id)).toBe(bobBefore + 2500n);

    const accepted = await notificationsOf(first);
    expect(accepted.find((n) => n.type === 'pix.received')).toMatchObject({ status: 'DELIVERED', lastStatus: 200, body: { data: { txid: charge.txid, amountCents: '2500', receiver: { branch: bob.account.agency, account: bob.account.number } } } });
    const refused = await notificationsOf(second);
    expect(refused.find((n) => n.type === 'pix.received')).toMatchObject({ status: 'REFUSED', lastStatus: 409, lastError: expect.stringContaining('CHARGE_ALREADY_PAID') });
    await waitFor(async () => ((await notificationTypes(second, 'DELIVERED')).includes('payout.failed') ? true : undefined), 20_000, 'payout.failed delivered');
  });
});
