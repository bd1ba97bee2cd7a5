import { Account } from '../accounts/entities.ts';
import { enqueueEvents, type OutboxEvent } from '../events/outbox.ts';
import type { PaymentContext } from '../payments/context.ts';
import { payAuthorizedPixKey } from '../payments/pix.ts';
import { payTev } from '../payments/tev.ts';
import { DomainError, isRefusal, type Refusal } from '../shared/errors.ts';
import type { NextOccurrence, OccurrencePolicy, OccurrenceStatus } from '../../workflows/contracts/scheduled-payment.ts';
import { endOfDay } from './recurrence.ts';
import { finishOccurrence, lockOccurrence, markRunning, nextOpenOccurrence, scheduleById, scheduleRetry, type AttemptRecord, type Occurrence, type Schedule } from './store.ts';

/**
 * The occurrences of a schedule, run by its workflow (workflows/scheduled-payment.ts) through the normal payment path:
 * `payTev` (settled in the request's function, or held for the account's approver) or a Pix to a key (the key resolved
 * now, then held or debited with its settlement handed off). Limits, fees, events and payouts are those of any payment.
 *
 * An attempt pays under a key of its own: the schedule, the date and the attempts refused before it. It is claimed
 * (RUNNING) before it pays and its outcome recorded after, only if the occurrence is still at that attempt; so a step
 * retried or run twice pays under the same key (once, whatever failed in between), and the next attempt's key is used
 * only once this one's refusal (nothing moved) is recorded.
 */

/** The idempotency key of an occurrence's attempt: the first under the schedule and date, each retry with its number. */
export const attemptKey = (scheduleId: string, date: string, attempt: number): string =>
  `scheduled-payment:${scheduleId}:${date}${attempt === 0 ? '' : `:retry-${attempt}`}`;

/** The run's read before each wait. A run without its schedule is a defect (its hand-off commits with it): retried in view. */
export async function nextOccurrence(ctx: Pick<PaymentContext, 'orm'>, tenantId: string, scheduleId: string): Promise<NextOccurrence> {
  const found = await nextOpenOccurrence(ctx.orm.em.fork(), tenantId, scheduleId);
  if (!found) throw new Error(`no scheduled payment ${scheduleId}`);
  return found;
}

/** Refusals that say nothing of the payment, only that a dependency is away: the step is retried, not the occurrence failed. */
const UNAVAILABLE: readonly Refusal[] = ['PIX_PROVIDER_UNAVAILABLE', 'TEMPORARILY_UNAVAILABLE'];

/** What an attempt came to: a record, or a refusal for insufficient balance (retried while the policy allows). */
type Attempted = AttemptRecord | { status: 'INSUFFICIENT_BALANCE' };

/** Pays the occurrence once under `key`. A payment whose outcome is not known yet throws: the step is retried under the same key. */
async function attempt(ctx: PaymentContext, schedule: Schedule, key: string): Promise<Attempted> {
  const refused = (reason: string): Attempted => (reason === 'INSUFFICIENT_BALANCE' ? { status: 'INSUFFICIENT_BALANCE' } : { status: 'FAILED', reason });
  try {
    const { target } = schedule;
    if (target.kind === 'TEV') {
      const answer = await payTev(ctx, {
        tenantId: schedule.tenantId,
        sourceAccountId: schedule.accountId,
        destination: { branch: target.branch, account: target.account },
        amountCents: BigInt(schedule.amountCents),
        description: schedule.description,
        externalRef: null,
        idempotencyKey: key,
        origin: schedule.origin,
      });
      if ('held' in answer) return { status: 'HELD_FOR_APPROVAL', approvalRequestId: answer.held.approvalRequestId };
      const { result } = answer;
      if (result.kind === 'submitted_unknown') throw new Error(`TEV ${result.tevId} of ${key}: outcome not known yet`);
      return result.kind === 'done' ? { status: 'PAID', tevId: result.outcome.tevId, payoutId: null } : refused(result.outcome.reason ?? 'REJECTED');
    }
    const em = ctx.orm.em.fork();
    const account = await em.findOneOrFail(Account, { id: schedule.accountId, tenantId: schedule.tenantId });
    const answer = await payAuthorizedPixKey(ctx, {
      em,
      tenantId: schedule.tenantId,
      requesterHolderId: account.holderId!,
      account,
      idempotencyKey: key,
      amountCents: BigInt(schedule.amountCents),
      pixKey: target.pixKey,
      pixKeyType: target.pixKeyType,
      description: schedule.description ?? 'Pix agendado',
    });
    if (answer.kind === 'held') return { status: 'HELD_FOR_APPROVAL', approvalRequestId: answer.held.approvalRequestId };
    if (answer.kind === 'pending') throw new Error(`payout ${answer.payout.payoutId} of ${key}: debit not decided yet`);
    return { status: 'PAID', tevId: null, payoutId: answer.payout.payoutId };
  } catch (err) {
    if (err instanceof DomainError && UNAVAILABLE.includes(err.refusal)) throw err;
    if (isRefusal(err)) return refused(err.code);
    throw err;
  }
}

/**
 * Runs the occurrence's attempt due now and records what came of it: PAID, HELD_FOR_APPROVAL, FAILED, or SCHEDULED
 * again for a retry (refused for insufficient balance, with retries left that fit in its São Paulo day). A step that
 * finds the occurrence final already (a retry of a step that recorded it) answers its status; one cancelled before
 * its attempt started answers CANCELLED without paying. Its events are written with its outcome.
 */
export async function runOccurrence(ctx: PaymentContext, tenantId: string, scheduleId: string, date: string, policy: OccurrencePolicy): Promise<OccurrenceStatus> {
  const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
    const o = await lockOccurrence(tx, tenantId, scheduleId, date);
    if (!o) throw new Error(`no occurrence ${date} of scheduled payment ${scheduleId}`);
    if (o.status !== 'SCHEDULED' && o.status !== 'RUNNING') return o.status;
    // The timer ran on Temporal's clock and the due time is the database's: retried until the two agree.
    if (o.status === 'SCHEDULED' && !o.due) throw new Error(`occurrence ${date} of scheduled payment ${scheduleId} is not due yet by the database clock`);
    await markRunning(tx, tenantId, scheduleId, date, policy.lateAfterMs);
    return o.attempts;
  });
  if (typeof claimed === 'string') return claimed;
  const schedule = (await scheduleById(ctx.orm.em.fork(), tenantId, scheduleId))!;
  const attempted = await attempt(ctx, schedule, attemptKey(scheduleId, date, claimed));
  return ctx.orm.em.fork().transactional(async (tx) => {
    const o = (await lockOccurrence(tx, tenantId, scheduleId, date))!;
    // Recorded by another run of this step meanwhile (under the same key, so the same payment).
    if (o.status !== 'RUNNING' || o.attempts !== claimed) return o.status;
    if (attempted.status === 'INSUFFICIENT_BALANCE') {
      const retryAt = new Date(Date.now() + policy.retryIntervalMs);
      if (!o.scheduleCancelled && claimed < policy.retries && retryAt < endOfDay(date)) {
        await scheduleRetry(tx, tenantId, scheduleId, date, claimed, retryAt, attempted.status);
        return 'SCHEDULED';
      }
    }
    const record: AttemptRecord = attempted.status === 'INSUFFICIENT_BALANCE' ? { status: 'FAILED', reason: attempted.status } : attempted;
    const finished = (await finishOccurrence(tx, tenantId, scheduleId, date, claimed, record))!;
    const account = await tx.findOneOrFail(Account, { id: schedule.accountId });
    await enqueueEvents(tx, [occurrenceEvent(schedule, finished, account.pixAccountId)]);
    return finished.status;
  });
}

/** `payment.scheduled.executed` (paid or held) or `payment.scheduled.failed`, for a finished occurrence. */
function occurrenceEvent(schedule: Schedule, o: Occurrence, pixAccountId: string): OutboxEvent {
  const common = {
    scheduleId: schedule.id,
    occurrenceDate: o.date,
    dueAt: o.dueAt,
    startedAt: o.startedAt!,
    late: o.late!,
    attempts: o.attempts + 1,
    kind: schedule.target.kind,
    amountCents: schedule.amountCents,
    occurredAt: o.finishedAt!,
  };
  const owner = { tenantId: schedule.tenantId, accountId: schedule.accountId, pixAccountId };
  if (o.status === 'PAID' || o.status === 'HELD_FOR_APPROVAL') {
    return { ...owner, type: 'payment.scheduled.executed', data: { ...common, status: o.status, tevTransferId: o.tevId, payoutId: o.payoutId, approvalRequestId: o.approvalRequestId } };
  }
  return { ...owner, type: 'payment.scheduled.failed', data: { ...common, reason: o.reason! } };
}
