/**
 * Issue 23: a Pix payment is debited in the request, like a TEV, and its settlement workflow waits for the provider's
 * notification instead of polling, and ends. Real api, worker, Temporal, PostgreSQL and the sandbox PSP over HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Connection, Client } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const provider = new Webhook(SECRET);
const SEND_FEE = 7;

let platform: Platform;
let temporal: Client;
let connection: Connection;
let tenantId: string;
/** A PIN-exempt tenant's holder, paying with a client token: parallel payments do not queue on the PIN check. */
let payer: Payer;
let tenantKey: string;

type Payer = Onboarded & { clientToken: string };

async function clientHolder(): Promise<Payer> {
  const holder = await onboarded(platform, tenantId);
  const client = await http('POST', `${platform.holderUrl}/authenticate/clients`, { body: { document: holder.document }, headers: { ...tenantHeaders(tenantId), 'x-tenant-api-key': tenantKey } });
  expect(client.status).toBe(200);
  return { ...holder, clientToken: client.body.token };
}

beforeAll(async () => {
  // A notification that comes late on a loaded machine is made up by the workflow's query after 5 s.
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '300', PIX_PROVIDER_WEBHOOK_SECRET: SECRET, PIX_NOTIFICATION_WAIT_MS: '5000' });
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
  tenantId = await newTenant(platform, { pinExempt: true });
  await adminOk(platform.env, 'fees:set', '--tenant', tenantId, '--pix-out-cents', String(SEND_FEE));
  tenantKey = (await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId)).key;
  payer = await clientHolder();
}, 90_000);

afterAll(async () => {
  try {
    await expectLedgerConsistent(tenantId);
  } finally {
    // Stopped whatever the check found: a platform left running outlives the test run.
    await connection?.close();
    await platform?.stop();
    await closeDb();
  }
});

const pay = (amount: number, from: Payer = payer) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: from.account.id, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
    headers: { ...tenantHeaders(tenantId, from.clientToken), 'idempotency-key': randomUUID() },
  });

const payoutRow = async (payoutId: string) =>
  (await sql<{ status: string; end_to_end_id: string | null; refunded_cents: string }>('select status, end_to_end_id, refunded_cents::text as refunded_cents from pix_payout where id = $1', [payoutId]))[0]!;

const workflowStatus = async (payoutId: string) => (await temporal.workflow.getHandle(`pix-payout-${payoutId}`).describe()).status.name;

async function untilPosted(payoutId: string): Promise<string> {
  let row = await payoutRow(payoutId);
  await waitFor(async () => (row = await payoutRow(payoutId)).status === 'POSTED', 40_000, `payout ${payoutId} POSTED`);
  return row.end_to_end_id!;
}

describe('the debit, in the request', () => {
  test('30 parallel payments against funds for 3: exactly 3 debited (201), the others 422 with nothing moved', async () => {
    const amount = 100;
    const holder = await clientHolder();
    await fund(platform, tenantId, holder.account.id, 3 * (amount + SEND_FEE));
    const answers = await Promise.all(Array.from({ length: 30 }, () => pay(amount / 100, holder)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(3).fill(201), ...Array(27).fill(422)]);
    for (const refused of answers.filter((a) => a.status === 422)) expect(refused.body.code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(holder.account.id)).toBe(0n);
    const debited = answers.filter((a) => a.status === 201).map((a) => a.body.payout.payoutId as string);
    expect(new Set(debited).size).toBe(3);
    for (const payoutId of debited) await untilPosted(payoutId);
    expect(await balanceOf(holder.account.id)).toBe(0n);
  }, 90_000);

  test('with the worker stopped, a payment is still debited at once (201) and handed off; the worker settles it when back', async () => {
    await fund(platform, tenantId, payer.account.id, 10_000);
    await platform.stopWorker();
    let restarted = false;
    try {
      const started = Date.now();
      const res = await pay(12.34);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.status).toBe(201);
      expect(res.body.payout).toMatchObject({ status: 'PROCESSING', amountCents: '1234', feeCents: String(SEND_FEE) });
      const payoutId = res.body.payout.payoutId as string;
      expect(await sql('select workflow_id from workflow_start where workflow_id = $1', [`pix-payout-${payoutId}`])).toEqual([{ workflow_id: `pix-payout-${payoutId}` }]);
      expect((await payoutRow(payoutId)).status).toBe('PROCESSING');
      await platform.startWorker();
      restarted = true;
      await untilPosted(payoutId);
    } finally {
      if (!restarted) await platform.startWorker();
    }
  }, 60_000);
});

describe('the settlement workflow waits for the notification and ends', () => {
  test('settled by the notification: the hand-off submitted the payout, and its workflow ran one task when the notification woke it', async () => {
    await fund(platform, tenantId, payer.account.id, 10_000);
    const res = await pay(2.5);
    expect(res.status).toBe(201);
    const payoutId = res.body.payout.payoutId as string;
    await untilPosted(payoutId);
    await waitFor(async () => (await workflowStatus(payoutId)) === 'COMPLETED', 10_000, 'payout workflow completed');
    const history = await temporal.workflow.getHandle(`pix-payout-${payoutId}`).fetchHistory();
    const kinds = history.events!.map((e) => Object.keys(e).find((k) => k.endsWith('EventAttributes'))!);
    // Started to wait (its first task delayed), and woken by the notification's signal-with-start: no query of the
    // provider, no timer.
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    expect(Number(started.firstWorkflowTaskBackoff?.seconds ?? 0)).toBeGreaterThan(0);
    expect(kinds).toContain('workflowExecutionSignaledEventAttributes');
    expect(kinds.filter((k) => k === 'workflowTaskCompletedEventAttributes')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'timerStartedEventAttributes')).toEqual([]);
    // The submission was the hand-off's, before the start: no activity, and no marker but the patch's.
    expect(kinds.filter((k) => k === 'activityTaskScheduledEventAttributes')).toEqual([]);
    expect(kinds.filter((k) => k === 'markerRecordedEventAttributes')).toHaveLength(1);
  }, 60_000);

  test('a return 30 days after settlement posts once, long after the workflow ended', async () => {
    await fund(platform, tenantId, payer.account.id, 10_000);
    const res = await pay(40);
    const payoutId = res.body.payout.payoutId as string;
    const endToEndId = await untilPosted(payoutId);
    await waitFor(async () => (await workflowStatus(payoutId)) === 'COMPLETED', 10_000, 'payout workflow completed');
    // As if settled 30 days ago.
    await sql(`update pix_payout set settled_at = settled_at - interval '30 days' where id = $1`, [payoutId]);
    const balance = await balanceOf(payer.account.id);
    const returnedAt = new Date().toISOString();
    const data = { payoutId, endToEndId, returnEndToEndId: `D99999999202612241200${randomUUID().replace(/-/g, '').slice(0, 11)}`, amountCents: '1500', returnedAt };
    const notify = (id: string) => {
      const raw = JSON.stringify({ type: 'payout.returned', data });
      const at = new Date();
      return http('POST', `${platform.apiUrl}/v1/pix/provider/notifications`, {
        body: raw,
        headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': provider.sign(id, at, raw) },
      });
    };
    const first = await notify(`msg_${randomUUID()}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'applied', result: { payoutId, payoutStatus: 'REFUNDED', refundedCents: '1500' } });
    // The same return again, under another notification id (a provider that retried with a new id): nothing more moves.
    const again = await notify(`msg_${randomUUID()}`);
    expect(again.status).toBe(200);
    expect(again.body.result).toMatchObject({ payoutStatus: 'REFUNDED', refundedCents: '1500' });
    expect(await balanceOf(payer.account.id)).toBe(balance + 1500n);
    const events = await sql(`select data->>'refundAmountCents' as amount from event_outbox where type = 'pix.payout.refunded' and data->>'payoutId' = $1`, [payoutId]);
    expect(events).toEqual([{ amount: '1500' }]);
    expect(await workflowStatus(payoutId)).toBe('COMPLETED');
  }, 60_000);
});
