import { expect } from '@jest/globals';
import { waitFor } from '../support/fixtures.ts';
import { expectLedgerConsistent } from '../support/ledger.ts';
import { stuckWorkReport, type DiagnosedTarget } from './diagnostics.ts';
import { BATCH_PIX_ITEMS, BATCH_TEV_ITEMS, DOCUMENTED, runLoad, startBackground, type Answered, type Background, type LoadCast, type LoadTarget } from './load.ts';

/** A platform under fault injection, as the checks below see it: where the load goes, and its database. */
export interface FaultTarget extends LoadTarget, DiagnosedTarget {}

/**
 * The load around a fault and the checks after it, shared by the single-process fault suite (faults.test.ts) and the
 * scale-out one (cluster-faults.test.ts): every request answered in time as documented, every operation final, money
 * moved once, the ledger conserved, one successful attempt per webhook delivery.
 */
export function faultOutcomes(stack: FaultTarget, cast: LoadCast, o: { clients: number; requestDeadlineMs: number; finalWithinMs: number }) {
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
    const load = runLoad(stack, cast, o.clients, () => stopped);
    try {
      await sleep(2000);
      await fault(background);
      await sleep(2000);
    } finally {
      // Also when the fault's own checks fail: a load left running would go on into the next test, and keep the test
      // process from ever exiting.
      stopped = true;
      await load;
    }
    return { answered: await load, background };
  }

  /** Every request was answered in time with a documented status and a body (the api's own death aside). */
  function expectDocumentedAnswers(answered: Answered[], options: { connectionsMayDrop?: boolean; atLeast?: number } = {}) {
    expect(answered.length).toBeGreaterThanOrEqual(options.atLeast ?? 20);
    const wrong = answered.filter((a) => {
      if (a.status === 0) return !options.connectionsMayDrop;
      return !DOCUMENTED[a.kind].includes(a.status) || typeof a.body !== 'object' || a.body === null || a.ms > o.requestDeadlineMs + 5000;
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
         (select count(*) from event_outbox e, event_relay_cursor c where c.relay = 'webhooks' and ((e.txid, e.seq) > (c.txid, c.seq) or e.txid = any (c.running)))::int as events_not_relayed,
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
    }, o.finalWithinMs, 'every operation final').catch(async (err: Error) => {
      throw new Error(`${err.message}: still open ${JSON.stringify(last)}\n${await stuckWorkReport(stack, cast.tenantId)}`);
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

  /** Where the load's unfinished work is held back, for a failure message. */
  const report = () => stuckWorkReport(stack, cast.tenantId);

  return { batchStatus, occurrencesOf, underLoad, report, expectDocumentedAnswers, expectAllFinal, expectBackgroundDone };
}

export type FaultOutcomes = ReturnType<typeof faultOutcomes>;
