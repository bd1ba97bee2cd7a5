import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, waitFor } from '../support/fixtures.ts';
import { http } from '../support/http.ts';
import { expectLedgerConsistent } from '../support/ledger.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { BATCH_PIX_ITEMS, BATCH_TEV_ITEMS, DOCUMENTED, runLoad, startBackground, type Answered, type Background, type LoadCast } from './load.ts';
import { startFaultStack, type FaultStack } from './stack.ts';
import { adminOk } from '../support/admin.ts';

/**
 * Faults under load, against real processes: each case runs mixed requests (TEV, Pix, charges, held payments,
 * registrations) from several clients, with a batch payout running and two scheduled payments due as the fault hits,
 * injects one fault in the middle, and then checks that every request got a documented answer in time and that every
 * operation (each batch item and occurrence included) reaches its final state by itself, having moved money once,
 * with the ledger conserved.
 */

const REQUEST_DEADLINE_MS = 15_000;
const FINAL_WITHIN_MS = 60_000;
const CLIENTS = 6;
const LATE_AFTER_MS = 2_000;

let stack: FaultStack;
let cast: LoadCast;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startFaultStack({
    REQUEST_DEADLINE_MS: String(REQUEST_DEADLINE_MS),
    TEV_RESPONSE_DEADLINE_MS: '3000',
    SANDBOX_TEV_RESOLVE_MS: '1000',
    APPROVAL_TTL_MS: '10000',
    SANDBOX_PIX_SETTLE_MS: '1000',
    // A wake lost with the fault is made up by the payout workflow's fallback query this soon.
    PIX_NOTIFICATION_WAIT_MS: '2000',
    PIX_QUERY_MAX_WAIT_MS: '4000',
    WEBHOOK_RETRY_INITIAL_MS: '500',
    WEBHOOK_RETRY_MAX_MS: '2000',
    // A batch's steps small and its Pix few in flight, so that it is still running when the fault hits.
    BATCH_CHUNK_SIZE: '20',
    BATCH_PIX_IN_FLIGHT: '4',
    SCHEDULED_PAYMENT_LATE_AFTER_MS: String(LATE_AFTER_MS),
  });
  receiver = await startReceiver();
  const tenantId = await newTenant(stack);
  const [payer, payee, held] = await Promise.all([onboarded(stack, tenantId), onboarded(stack, tenantId), onboarded(stack, tenantId)]);
  await adminOk(stack.env, 'account:dual-approval', '--account', held.account.id, '--approver-document', payee.document);
  await Promise.all([fund(stack, tenantId, payer.account.id, 100_000_000), fund(stack, tenantId, held.account.id, 1_000_000)]);
  const [payerPix, heldPix] = await Promise.all([pixAccountIdOf(stack, tenantId, payer.document), pixAccountIdOf(stack, tenantId, held.document)]);
  const [payerKey, heldKey] = await Promise.all([apiKey(stack, tenantId, payerPix), apiKey(stack, tenantId, heldPix)]);
  cast = { tenantId, payer: { ...payer, key: payerKey, pixAccountId: payerPix }, payee, held: { ...held, key: heldKey } };
  const hook = await http('POST', `${stack.apiUrl}/v1/pix-accounts/${payerPix}/webhooks`, {
    body: { url: `${receiver.url}/faults`, events: ['tev.out.succeeded', 'tev.out.failed', 'pix.payout.succeeded'], authToken: 'fault-suite-token-0123456789abcdefghij' },
    headers: { authorization: `Bearer ${payerKey}`, 'idempotency-key': `hook-${tenantId}` },
  });
  expect(hook.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The batch's status now. */
const batchStatus = async (b: Background) => (await stack.sql<{ status: string }>('select status from payment_batch where id = $1', [b.batchId]))[0]!.status;

/** The scheduled payments' occurrences as they stand. */
const occurrencesOf = (b: Background) =>
  stack.sql<{ status: string; late: boolean | null; tev_id: string | null; payout_id: string | null }>(
    'select status, late, tev_id, payout_id from scheduled_payment_occurrence where schedule_id = any($1::uuid[]) order by schedule_id',
    [b.scheduleIds],
  );

/**
 * Runs the load around `fault`, with a batch started and two scheduled payments due 4 s (to the second) before it
 * begins: `fault` gets the moment to inject it, about 2 s in. Answers every request got, and the background work.
 */
async function underLoad(fault: (background: Background) => Promise<void>): Promise<{ answered: Answered[]; background: Background }> {
  const background = await startBackground(stack, cast, 4000);
  let stopped = false;
  const load = runLoad(stack, cast, CLIENTS, () => stopped);
  await sleep(2000);
  await fault(background);
  await sleep(2000);
  stopped = true;
  return { answered: await load, background };
}

/** Every request was answered in time with a documented status and a body (the api's own death aside). */
function expectDocumentedAnswers(answered: Answered[], options: { connectionsMayDrop?: boolean; atLeast?: number } = {}) {
  expect(answered.length).toBeGreaterThanOrEqual(options.atLeast ?? 20);
  const wrong = answered.filter((a) => {
    if (a.status === 0) return !options.connectionsMayDrop;
    return !DOCUMENTED[a.kind].includes(a.status) || typeof a.body !== 'object' || a.body === null || a.ms > REQUEST_DEADLINE_MS + 5000;
  });
  expect(wrong).toEqual([]);
}

/** What is not final yet, for the tenant of the load. */
async function unfinished(): Promise<Record<string, number>> {
  const [row] = await stack.sql(
    `select
       (select count(*) from tev_transfer where tenant_id = $1 and status = 'PROCESSING')::int as tev_processing,
       (select count(*) from pix_payout where tenant_id = $1 and status in ('REQUESTED', 'PROCESSING'))::int as payouts_open,
       (select count(*) from pix_charge where tenant_id = $1 and status = 'ACTIVE' and expires_at < now() - interval '1 second')::int as charges_past_expiry,
       (select count(*) from approval_request where tenant_id = $1
          and (status = 'APPROVED' or (status = 'PENDING' and expires_at < now() - interval '1 second')))::int as approvals_past_deadline,
       (select count(*) from holder h where h.tenant_id = $1 and not exists (select 1 from account a where a.holder_id = h.id))::int as holders_without_account,
       (select count(*) from payment_batch where tenant_id = $1 and status not in ('FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED'))::int as batches_open,
       (select count(*) from payment_batch_item i join payment_batch b on b.id = i.batch_id
         where b.tenant_id = $1 and i.status in ('PENDING', 'PROCESSING'))::int as batch_items_open,
       (select count(*) from scheduled_payment_occurrence where tenant_id = $1 and status in ('SCHEDULED', 'RUNNING')
           and next_attempt_at < now() - interval '1 second')::int as occurrences_past_due,
       (select count(*) from workflow_start)::int as hand_offs_waiting,
       (select count(*) from event_outbox e, event_relay_cursor c where c.relay = 'webhooks' and (e.txid, e.seq) > (c.txid, c.seq))::int as events_not_relayed,
       (select count(*) from webhook_delivery where status = 'PENDING')::int as deliveries_pending`,
    [cast.tenantId],
  );
  return Object.fromEntries(Object.entries(row).filter(([, n]) => n !== 0)) as Record<string, number>;
}

/** Waits until every operation is final; answers how long that took. */
async function expectAllFinal(): Promise<number> {
  const started = Date.now();
  let last: Record<string, number> = {};
  await waitFor(async () => {
    last = await unfinished();
    return Object.keys(last).length === 0;
  }, FINAL_WITHIN_MS, 'every operation final').catch((err: Error) => {
    throw new Error(`${err.message}: still open ${JSON.stringify(last)}`);
  });
  await expectLedgerConsistent(cast.tenantId, stack.sql);
  // Money moved once: each batch item debited its account once if PAID (for its amount), at most once if FAILED (a Pix
  // debited, then given back), never if INVALID or CANCELLED; each occurrence once if PAID, and under one key only.
  const items = await stack.sql(
    `select i.batch_id, i.external_ref, i.status, count(m.id)::int as debits
       from payment_batch_item i join payment_batch b on b.id = i.batch_id
       left join movement m on m.operation_id = i.payout_id and m.account_id = b.account_id and m.direction = 'DEBIT' and m.source <> 'REVERSAL'
      where b.tenant_id = $1
      group by i.batch_id, i.external_ref, i.status, i.amount_cents
     having count(m.id) > 1 or (i.status = 'PAID' and (count(m.id) <> 1 or max(m.amount_cents) <> i.amount_cents))
         or (i.status in ('INVALID', 'CANCELLED') and count(m.id) <> 0)`,
    [cast.tenantId],
  );
  expect(items).toEqual([]);
  const occurrences = await stack.sql(
    `select o.schedule_id, o.status, count(m.id)::int as debits
       from scheduled_payment_occurrence o join scheduled_payment s on s.id = o.schedule_id
       left join movement m on m.operation_id = coalesce(o.tev_id, o.payout_id) and m.account_id = s.account_id and m.direction = 'DEBIT' and m.source <> 'REVERSAL'
      where o.tenant_id = $1
      group by o.schedule_id, o.occurrence_date, o.status
     having count(m.id) <> case when o.status = 'PAID' then 1 else 0 end`,
    [cast.tenantId],
  );
  expect(occurrences).toEqual([]);
  const paidTwice = await stack.sql(
    `select occurrence, count(*)::int from (
       select split_part(idempotency_key, ':', 2) || ':' || split_part(idempotency_key, ':', 3) as occurrence from tev_transfer
        where tenant_id = $1 and idempotency_key like 'scheduled-payment:%' and status = 'DONE'
       union all
       select split_part(idempotency_key, ':', 2) || ':' || split_part(idempotency_key, ':', 3) from pix_payout
        where tenant_id = $1 and idempotency_key like 'scheduled-payment:%' and status not in ('REJECTED', 'FAILED', 'CANCELLED')) paid
      group by occurrence having count(*) > 1`,
    [cast.tenantId],
  );
  expect(paidTwice).toEqual([]);
  // At least once: no delivery has two successful attempts.
  const doubled = await stack.sql(
    `select d.id from webhook_delivery d
      where (select count(*) from webhook_attempt a where a.delivery_id = d.id and a.error is null) > 1
         or (d.status = 'DELIVERED' and not exists (select 1 from webhook_attempt a where a.delivery_id = d.id and a.error is null))`,
  );
  expect(doubled).toEqual([]);
  return Date.now() - started;
}

/** The background work ended as it should: every item of the batch paid, each scheduled payment paid once. */
async function expectBackgroundDone(b: Background): Promise<void> {
  const [batch] = await stack.sql('select status from payment_batch where id = $1', [b.batchId]);
  expect(batch.status).toBe('FINISHED');
  const items = await stack.sql<{ status: string; n: number }>('select status, count(*)::int as n from payment_batch_item where batch_id = $1 group by status', [b.batchId]);
  expect(items).toEqual([{ status: 'PAID', n: BATCH_TEV_ITEMS + BATCH_PIX_ITEMS }]);
  expect((await occurrencesOf(b)).map((o) => o.status)).toEqual(['PAID', 'PAID']);
}

describe('faults under load', () => {
  test('(a) Temporal unreachable from the api, then back: every operation final within 60 s, with no client retry', async () => {
    let reconnectedAt = 0;
    const { answered, background } = await underLoad(async () => {
      await stack.temporalProxy.cut();
      await sleep(8000);
      const health = await http('GET', `${stack.apiUrl}/health`);
      expect(health.status).toBe(503);
      expect(health.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'temporal' })]));
      await stack.temporalProxy.restore();
      reconnectedAt = Date.now();
    });
    expectDocumentedAnswers(answered);
    // A Pix payment never waits for Temporal: each was debited at once (201) while it was away, and settled after.
    const pix = answered.filter((a) => a.kind === 'pix');
    expect(pix.some((a) => a.status === 201)).toBe(true);
    expect(pix.filter((a) => a.status === 202)).toEqual([]);
    await expectAllFinal();
    await expectBackgroundDone(background);
    const fromReconnection = Date.now() - reconnectedAt;
    process.stdout.write(`fault (a): from reconnection to the last operation final: ${fromReconnection} ms\n`);
    expect(fromReconnection).toBeLessThan(FINAL_WITHIN_MS);
    await waitFor(async () => (await http('GET', `${stack.apiUrl}/health`)).status === 200, 20_000, 'health back to 200');
  }, 120_000);

  test('the api starts while Temporal is unreachable: /health 503 naming it, TEVs and registrations served, then carried through', async () => {
    await stack.temporalProxy.cut();
    try {
      await stack.killApi();
      await stack.startApi();
      const health = await http('GET', `${stack.apiUrl}/health`);
      expect(health.status).toBe(503);
      expect(health.body.details).toEqual([expect.objectContaining({ path: 'temporal', message: expect.stringContaining('Temporal') })]);
      let remaining = 14;
      const answered = await runLoad(stack, cast, 2, () => remaining-- <= 0);
      expectDocumentedAnswers(answered, { atLeast: 12 });
      expect(answered.filter((a) => a.kind === 'tev').every((a) => a.status === 200 || a.status === 502)).toBe(true);
    } finally {
      await stack.temporalProxy.restore();
    }
    await waitFor(async () => (await http('GET', `${stack.apiUrl}/health`)).status === 200, 30_000, 'the api reconnected by itself');
    await expectAllFinal();
  }, 120_000);

  test('(b) the worker killed with SIGKILL under load, while a batch runs and scheduled payments fall due, then restarted: nothing stuck, nothing posted twice, one successful attempt per delivery', async () => {
    let batchAtKill = '';
    const { answered, background } = await underLoad(async (b) => {
      batchAtKill = await batchStatus(b);
      await stack.killWorker();
      // Down across the scheduled payments' due time, 5 s at least.
      await sleep(Math.max(5000, b.dueAt - Date.now() + 1000));
      await stack.startWorker();
    });
    expect(batchAtKill).toBe('PROCESSING');
    expectDocumentedAnswers(answered);
    await expectAllFinal();
    await expectBackgroundDone(background);
    expect(receiver.received.length).toBeGreaterThan(0);
  }, 120_000);

  test('(g) Temporal stopped across scheduled payments\' due time, under load, with a batch running: each occurrence runs once when it is back, late; the batch finishes', async () => {
    let whileAway: string[] = [];
    const { answered, background } = await underLoad(async (b) => {
      await stack.stopTemporal();
      try {
        await sleep(b.dueAt - Date.now() + LATE_AFTER_MS + 1000);
        whileAway = (await occurrencesOf(b)).map((o) => o.status);
      } finally {
        await stack.startTemporal();
      }
    });
    expect(whileAway).toEqual(['SCHEDULED', 'SCHEDULED']);
    expectDocumentedAnswers(answered);
    await expectAllFinal();
    await expectBackgroundDone(background);
    expect((await occurrencesOf(background)).map((o) => o.late)).toEqual([true, true]);
  }, 120_000);

  test('(c) PostgreSQL paused with SIGSTOP for 10 s under load: every request answered in time, every operation final', async () => {
    const { answered, background } = await underLoad(async () => {
      stack.pausePostgres();
      try {
        await sleep(10_000);
      } finally {
        stack.resumePostgres();
      }
    });
    expectDocumentedAnswers(answered);
    await expectAllFinal();
    await expectBackgroundDone(background);
  }, 120_000);

  test('(d) the api killed with SIGKILL mid-load and restarted: every operation final', async () => {
    const { answered, background } = await underLoad(async () => {
      await stack.killApi();
      await sleep(2000);
      await stack.startApi();
    });
    expectDocumentedAnswers(answered, { connectionsMayDrop: true });
    await expectAllFinal();
    await expectBackgroundDone(background);
  }, 120_000);

  test('(f) the settlement raises an error of its own under load: a definite 500 with nothing moved, no workflow, the rest unharmed', async () => {
    // A defect that no retry heals: the ledger refuses the transfers of one amount the load never sends.
    const refused = 4243;
    await stack.sql(`create function refuse_fault_amount() returns trigger language plpgsql as $$ begin raise exception 'ledger refuses this transfer'; end $$`);
    await stack.sql(`create trigger refuse_fault_amount before insert on tev_transfer for each row when (new.amount_cents = ${refused}) execute function refuse_fault_amount()`);
    let refusals: { status: number; body: any }[] = [];
    let background: Background;
    try {
      let answered: Answered[];
      ({ answered, background } = await underLoad(async () => {
        refusals = await Promise.all(
          Array.from({ length: 5 }, () =>
            http('POST', `${stack.apiUrl}/v1/tev`, {
              body: { destinationBranch: cast.payee.account.agency, destinationAccount: cast.payee.account.number, amountCents: refused },
              headers: { authorization: `Bearer ${cast.payer.key}`, 'idempotency-key': `refused-${Math.random()}` },
            }),
          ),
        );
      }));
      expectDocumentedAnswers(answered);
    } finally {
      await stack.sql('drop trigger refuse_fault_amount on tev_transfer');
      await stack.sql('drop function refuse_fault_amount()');
    }
    expect(refusals.map((r) => [r.status, r.body.code])).toEqual(Array.from({ length: 5 }, () => [500, 'INTERNAL_ERROR']));
    await expectAllFinal();
    await expectBackgroundDone(background!);
    expect(await stack.sql('select id from tev_transfer where amount_cents = $1', [refused])).toEqual([]);
    expect(await stack.sql(`select key from workflow_start where args::text like $1`, [`%"amountCents":"${refused}"%`])).toEqual([]);
    expect(await stack.sql('select id from movement where tenant_id = $1 and amount_cents = $2', [cast.tenantId, refused])).toEqual([]);
  }, 120_000);

  test('(e) the Temporal dev server restarted mid-load, its history kept: every operation final', async () => {
    const { answered, background } = await underLoad(async () => {
      await stack.restartTemporal();
    });
    expectDocumentedAnswers(answered);
    await expectAllFinal();
    await expectBackgroundDone(background);
  }, 120_000);
});
