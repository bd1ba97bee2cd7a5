import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, waitFor } from '../support/fixtures.ts';
import { http } from '../support/http.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { runLoad, type Answered, type Background, type LoadCast } from './load.ts';
import { faultOutcomes, type FaultOutcomes } from './outcomes.ts';
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
// Generous beside another suite in CI: a batch paying 4 Pix at a time needs about 25 s alone after a fault, twice that
// on a loaded machine.
const FINAL_WITHIN_MS = 90_000;
const CLIENTS = 6;
const LATE_AFTER_MS = 2_000;

let stack: FaultStack;
let cast: LoadCast;
let receiver: Receiver;
let outcomes: FaultOutcomes;

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
  outcomes = faultOutcomes(stack, cast, { clients: CLIENTS, requestDeadlineMs: REQUEST_DEADLINE_MS, finalWithinMs: FINAL_WITHIN_MS });
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


describe('faults under load', () => {
  test('(a) Temporal unreachable from the api, then back: every operation final within 90 s, with no client retry', async () => {
    let reconnectedAt = 0;
    const { answered, background } = await outcomes.underLoad(async () => {
      await stack.temporalProxy.cut();
      await sleep(8000);
      const health = await http('GET', `${stack.apiUrl}/health`);
      expect(health.status).toBe(503);
      expect(health.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'temporal' })]));
      await stack.temporalProxy.restore();
      reconnectedAt = Date.now();
    });
    outcomes.expectDocumentedAnswers(answered);
    // A Pix payment never waits for Temporal: each was debited at once (201) while it was away, and settled after.
    const pix = answered.filter((a) => a.kind === 'pix');
    expect(pix.some((a) => a.status === 201)).toBe(true);
    expect(pix.filter((a) => a.status === 202)).toEqual([]);
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
    const fromReconnection = Date.now() - reconnectedAt;
    process.stdout.write(`fault (a): from reconnection to the last operation final: ${fromReconnection} ms\n`);
    expect(fromReconnection).toBeLessThan(FINAL_WITHIN_MS);
    await waitFor(async () => (await http('GET', `${stack.apiUrl}/health`)).status === 200, 20_000, 'health back to 200');
  }, 150_000);

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
      outcomes.expectDocumentedAnswers(answered, { atLeast: 12 });
      expect(answered.filter((a) => a.kind === 'tev').every((a) => a.status === 200 || a.status === 502)).toBe(true);
    } finally {
      await stack.temporalProxy.restore();
    }
    await waitFor(async () => (await http('GET', `${stack.apiUrl}/health`)).status === 200, 30_000, 'the api reconnected by itself');
    await outcomes.expectAllFinal();
  }, 150_000);

  test('(b) the worker killed with SIGKILL under load, while a batch runs and scheduled payments fall due, then restarted: nothing stuck, nothing posted twice, one successful attempt per delivery', async () => {
    let batchAtKill = '';
    const { answered, background } = await outcomes.underLoad(async (b) => {
      batchAtKill = await outcomes.batchStatus(b);
      await stack.killWorker();
      // Down across the scheduled payments' due time, 5 s at least.
      await sleep(Math.max(5000, b.dueAt - Date.now() + 1000));
      await stack.startWorker();
    });
    expect(batchAtKill).toBe('PROCESSING');
    outcomes.expectDocumentedAnswers(answered);
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
    expect(receiver.received.length).toBeGreaterThan(0);
  }, 150_000);

  test('(g) Temporal stopped across scheduled payments\' due time, under load, with a batch running: each occurrence runs once when it is back, late; the batch finishes', async () => {
    let whileAway: string[] = [];
    const { answered, background } = await outcomes.underLoad(async (b) => {
      await stack.stopTemporal();
      try {
        await sleep(b.dueAt - Date.now() + LATE_AFTER_MS + 1000);
        whileAway = (await outcomes.occurrencesOf(b)).map((o) => o.status);
      } finally {
        await stack.startTemporal();
      }
    });
    expect(whileAway).toEqual(['SCHEDULED', 'SCHEDULED']);
    outcomes.expectDocumentedAnswers(answered);
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
    expect((await outcomes.occurrencesOf(background)).map((o) => o.late)).toEqual([true, true]);
  }, 150_000);

  test('(c) PostgreSQL paused with SIGSTOP for 10 s under load: every request answered in time, every operation final', async () => {
    const { answered, background } = await outcomes.underLoad(async () => {
      stack.pausePostgres();
      try {
        await sleep(10_000);
      } finally {
        stack.resumePostgres();
      }
    });
    // Each client spends most of the pause on one request, so about 14 s of load make few answers (19 in one run alone).
    outcomes.expectDocumentedAnswers(answered, { atLeast: 12 });
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
  }, 150_000);

  test('(d) the api killed with SIGKILL mid-load and restarted: every operation final', async () => {
    const { answered, background } = await outcomes.underLoad(async () => {
      await stack.killApi();
      await sleep(2000);
      await stack.startApi();
    });
    outcomes.expectDocumentedAnswers(answered, { connectionsMayDrop: true });
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
  }, 150_000);

  test('(f) the settlement raises an error of its own under load: a definite 500 with nothing moved, no workflow, the rest unharmed', async () => {
    // A defect that no retry heals: the ledger refuses the transfers of one amount the load never sends.
    const refused = 4243;
    await stack.sql(`create function refuse_fault_amount() returns trigger language plpgsql as $$ begin raise exception 'ledger refuses this transfer'; end $$`);
    await stack.sql(`create trigger refuse_fault_amount before insert on tev_transfer for each row when (new.amount_cents = ${refused}) execute function refuse_fault_amount()`);
    let refusals: { status: number; body: any }[] = [];
    let background: Background;
    try {
      let answered: Answered[];
      ({ answered, background } = await outcomes.underLoad(async () => {
        refusals = await Promise.all(
          Array.from({ length: 5 }, () =>
            http('POST', `${stack.apiUrl}/v1/tev`, {
              body: { destinationBranch: cast.payee.account.agency, destinationAccount: cast.payee.account.number, amountCents: refused },
              headers: { authorization: `Bearer ${cast.payer.key}`, 'idempotency-key': `refused-${Math.random()}` },
            }),
          ),
        );
      }));
      outcomes.expectDocumentedAnswers(answered);
    } finally {
      await stack.sql('drop trigger refuse_fault_amount on tev_transfer');
      await stack.sql('drop function refuse_fault_amount()');
    }
    expect(refusals.map((r) => [r.status, r.body.code])).toEqual(Array.from({ length: 5 }, () => [500, 'INTERNAL_ERROR']));
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background!);
    expect(await stack.sql('select id from tev_transfer where amount_cents = $1', [refused])).toEqual([]);
    expect(await stack.sql(`select key from workflow_start where args::text like $1`, [`%"amountCents":"${refused}"%`])).toEqual([]);
    expect(await stack.sql('select id from movement where tenant_id = $1 and amount_cents = $2', [cast.tenantId, refused])).toEqual([]);
  }, 150_000);

  test('(e) the Temporal dev server restarted mid-load, its history kept: every operation final', async () => {
    const { answered, background } = await outcomes.underLoad(async () => {
      await stack.restartTemporal();
    });
    outcomes.expectDocumentedAnswers(answered);
    await outcomes.expectAllFinal();
    await outcomes.expectBackgroundDone(background);
  }, 150_000);
});
