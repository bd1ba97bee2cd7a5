import { IsolationLevel, type EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { findApprovalsOfTenant, type ApprovalRequest } from '../approvals/store.ts';
import { holderAccountByNumber } from '../accounts/store.ts';
import type { Config } from '../config.ts';
import { insertHandOffs } from '../handoff/store.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { checkPin } from '../identity/pin.ts';
import type { PaymentContext } from '../payments/context.ts';
import type { PixKeyType } from '../pix/keys.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import type { ApprovalStatus } from '../../workflows/contracts/approval.ts';
import { scheduleChangedWake, scheduledPaymentStart, type OccurrencePolicy } from '../../workflows/contracts/scheduled-payment.ts';
import { planOccurrences, type PlannedOccurrence, type ScheduleRule } from './recurrence.ts';
import {
  findSchedule,
  findScheduleByKey,
  insertSchedule,
  listSchedulesOf,
  markOccurrenceCancelled,
  markScheduleCancelled,
  occurrencesOf,
  type Occurrence,
  type Schedule,
  type ScheduledTarget,
  type ScheduleOrigin,
} from './store.ts';

/**
 * Scheduled and recurring payments: a holder (with the PIN) or an integrator (for an account of its key) schedules a
 * Pix to a key, or a TEV to an account of the tenant, for a São Paulo date and time, once or as a recurrence. The
 * schedule, every occurrence and the hand-off of its workflow are recorded in one transaction; nothing here calls
 * Temporal (the worker's reconciler starts the run). Each occurrence is paid by `runOccurrence` (execution.ts).
 */

/** A payment as asked: the receiver as written (a key in canonical form, an account by branch and number). */
export interface ScheduleRequest {
  target: { kind: 'PIX_KEY'; pixKey: string; pixKeyType: PixKeyType } | { kind: 'TEV'; branch: string; account: string };
  amountCents: bigint;
  description: string | null;
  rule: ScheduleRule;
}

/**
 * What became of an occurrence held for approval, as its request stands now: the approver's decision once made, and the
 * payment it made once approved (a FAILED one names the TEV refused, when it was recorded).
 */
export interface OccurrenceApproval {
  status: ApprovalStatus;
  decision: 'APPROVED' | 'REJECTED' | null;
  /** When it was decided, or expired or was cancelled. */
  decidedAt: string | null;
  reason: string | null;
  tevId: string | null;
  payoutId: string | null;
}

/** A schedule with its occurrences: the past ones with what came of them (a held one with its approval), the next ones with their due time. */
export interface ScheduleDetail {
  schedule: Schedule;
  occurrences: (Occurrence & { approval: OccurrenceApproval | null })[];
}

function approvalOf(r: ApprovalRequest): OccurrenceApproval {
  const paid = r.status === 'EXECUTED' || r.status === 'FAILED' ? r.operationId : null;
  return {
    status: r.status,
    decision: r.status === 'APPROVED' || r.status === 'EXECUTED' || r.status === 'FAILED' ? 'APPROVED' : r.status === 'REJECTED' ? 'REJECTED' : null,
    decidedAt: r.decidedAt,
    reason: r.reason,
    tevId: r.kind === 'TEV' ? paid : null,
    payoutId: r.kind === 'PIX' ? paid : null,
  };
}

/**
 * The account's schedule with its occurrences, and the approval requests of the held ones read in one query; null when
 * the account has no such schedule. All in one snapshot: the schedule's status and next run are derived from its
 * occurrences, and an occurrence finishing between two reads showed the schedule ACTIVE beside its last one PAID.
 */
async function detailOf(em: EntityManager, account: Pick<Account, 'id' | 'tenantId'>, scheduleId: string): Promise<ScheduleDetail | null> {
  return em.transactional(
    async (tx) => {
      const schedule = await findSchedule(tx, account.tenantId, account.id, scheduleId);
      if (!schedule) return null;
      const occurrences = await occurrencesOf(tx, schedule.tenantId, schedule.id);
      const held = occurrences.flatMap((o) => (o.approvalRequestId ? [o.approvalRequestId] : []));
      const requests = new Map((await findApprovalsOfTenant(tx, schedule.tenantId, held)).map((r) => [r.id, r]));
      return {
        schedule,
        occurrences: occurrences.map((o) => {
          const request = o.approvalRequestId ? requests.get(o.approvalRequestId) : undefined;
          return { ...o, approval: request ? approvalOf(request) : null };
        }),
      };
    },
    { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
  );
}

/** The occurrences' policy in force, as the run is given it. */
export const occurrencePolicy = (config: Pick<Config, 'SCHEDULED_PAYMENT_RETRIES' | 'SCHEDULED_PAYMENT_RETRY_INTERVAL_MS' | 'SCHEDULED_PAYMENT_LATE_AFTER_MS'>): OccurrencePolicy => ({
  retries: config.SCHEDULED_PAYMENT_RETRIES,
  retryIntervalMs: config.SCHEDULED_PAYMENT_RETRY_INTERVAL_MS,
  lateAfterMs: config.SCHEDULED_PAYMENT_LATE_AFTER_MS,
});

const runOf = (config: Config, s: Pick<Schedule, 'id' | 'tenantId' | 'accountId'>) => ({ scheduleId: s.id, tenantId: s.tenantId, accountId: s.accountId, policy: occurrencePolicy(config) });

/** The receiver as the schedule keeps it: the key's owner now (for the holder to see), or the tenant's account as numbered. */
async function targetOf(ctx: PaymentContext, em: EntityManager, account: Account, target: ScheduleRequest['target']): Promise<ScheduledTarget> {
  if (target.kind === 'PIX_KEY') {
    const beneficiary = await ctx.pixProvider.resolveKey(target.pixKeyType, target.pixKey);
    if (!beneficiary) throw new DomainError('PIX_KEY_NOT_FOUND');
    return { ...target, beneficiaryName: beneficiary.name };
  }
  const found = await holderAccountByNumber(em, account.tenantId, target.branch, target.account);
  if (!found) throw new DomainError('DESTINATION_NOT_FOUND', undefined, [{ path: 'body.account', message: 'no account with this branch and number in this tenant' }]);
  if (found.id === account.id) throw new DomainError('SAME_ACCOUNT', undefined, [{ path: 'body.account', message: 'the account itself' }]);
  return { kind: 'TEV', branch: found.branch, account: found.account };
}
targetOf.raises = refusals('PIX_KEY_NOT_FOUND', 'PIX_PROVIDER_UNAVAILABLE', 'DESTINATION_NOT_FOUND', 'SAME_ACCOUNT');

interface Scheduling {
  account: Account;
  origin: ScheduleOrigin;
  request: ScheduleRequest;
  idempotencyKey: string;
  /** The moment the schedule is made at: its first occurrence must be later. */
  now: Date;
}

/** What a request schedules, checked: its dates, and its receiver found. */
interface Checked {
  planned: PlannedOccurrence[];
  target: ScheduledTarget;
}

async function check(ctx: PaymentContext, em: EntityManager, s: Scheduling): Promise<Checked> {
  const planned = planOccurrences(s.request.rule, s.now);
  // settle_tev refuses it again when due (the setting may have changed): this answers the holder now, not at the due time.
  const max = ctx.config.TEV_MAX_AMOUNT_CENTS;
  if (s.request.target.kind === 'TEV' && s.request.amountCents > max) {
    throw new DomainError('AMOUNT_ABOVE_LIMIT', { maxAmountCents: max }, [{ path: 'body.amountCents', message: `at most ${max} cents for a TEV` }]);
  }
  return { planned, target: await targetOf(ctx, em, s.account, s.request.target) };
}
check.raises = refusals('AMOUNT_ABOVE_LIMIT', targetOf);

/** What a creation asks for, for its Idempotency-Key: the same key with another request is 409. */
const hashOf = (request: ScheduleRequest): string => requestHash({ ...request, amountCents: request.amountCents.toString() });

/** A retried creation: the schedule its Idempotency-Key made, if the request is the same. */
async function retried(em: EntityManager, s: Scheduling, hash: string): Promise<ScheduleDetail | null> {
  const existing = await findScheduleByKey(em, s.account.tenantId, s.account.id, s.idempotencyKey);
  if (!existing) return null;
  assertSameRequest(existing.requestHash, hash);
  return (await detailOf(em, s.account, existing.id))!;
}
retried.raises = refusals(assertSameRequest);

/** Records the schedule, its occurrences and its run's hand-off in one transaction (a concurrent retry gets the first). */
async function record(config: Config, em: EntityManager, s: Scheduling, hash: string, { planned, target }: Checked): Promise<ScheduleDetail> {
  const id = newUuid();
  const { account, request } = s;
  const created = await em.transactional(async (tx) => {
    const inserted = await insertSchedule(
      tx,
      {
        id,
        tenantId: account.tenantId,
        accountId: account.id,
        origin: s.origin,
        target,
        amountCents: request.amountCents,
        description: request.description,
        date: request.rule.date,
        time: request.rule.time,
        recurrence: request.rule.recurrence,
        idempotencyKey: s.idempotencyKey,
        requestHash: hash,
      },
      planned,
    );
    if (inserted) await insertHandOffs(tx, config.TEMPORAL_TASK_QUEUE, [scheduledPaymentStart(runOf(config, { id, tenantId: account.tenantId, accountId: account.id }))], { dueNow: true });
    return inserted;
  });
  if (!created) return (await retried(em, s, hash))!;
  return (await detailOf(em, account, id))!;
}
record.raises = refusals(retried);

/**
 * An integrator schedules a payment of an account of its key (the route checked the account may move money): its
 * dates checked (400), its receiver found (the key through the provider, or the account in the tenant), then recorded
 * with its workflow's hand-off. The same Idempotency-Key answers the schedule it made (another request is 409).
 */
export async function schedulePayment(ctx: PaymentContext, em: EntityManager, s: Scheduling): Promise<ScheduleDetail> {
  const hash = hashOf(s.request);
  const again = await retried(em, s, hash);
  if (again) return again;
  return record(ctx.config, em, s, hash, await check(ctx, em, s));
}
schedulePayment.raises = refusals(retried, check, record);

/**
 * A holder schedules a payment of their operating account: as `schedulePayment`, with the PIN checked before it is
 * recorded. A retry of a creation answers first, whatever the time: its date may have passed since (which `check` would
 * refuse), and it asks for nothing the holder cannot read without the PIN (GET of the schedule).
 */
export async function schedulePaymentAsHolder(ctx: PaymentContext, auth: HolderAuth, pin: string | undefined, s: Scheduling): Promise<ScheduleDetail> {
  const hash = hashOf(s.request);
  const again = await retried(auth.em, s, hash);
  if (again) return again;
  const checked = await check(ctx, auth.em, s);
  await checkPin(auth, ctx.config, pin);
  return record(ctx.config, auth.em, s, hash, checked);
}
schedulePaymentAsHolder.raises = refusals(retried, check, checkPin, record);

/** One schedule of the account with its occurrences; another account's (or none) is 404. */
export async function readSchedule(em: EntityManager, account: Pick<Account, 'id' | 'tenantId'>, scheduleId: string): Promise<ScheduleDetail> {
  const detail = await detailOf(em, account, scheduleId);
  if (!detail) throw notFound('Scheduled payment');
  return detail;
}
readSchedule.raises = refusals('NOT_FOUND');

/** The account's schedules, newest first, a page at a time. */
export async function listSchedules(em: EntityManager, cursorKey: string, account: Pick<Account, 'id' | 'tenantId'>, limit: number, cursor: string | undefined) {
  const scope = `scheduled-payments:${account.id}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const { items, pagination } = pageOf(await listSchedulesOf(em, account.tenantId, account.id, after, limit + 1), limit, cursorKey, scope);
  return { schedules: items, pagination };
}

/**
 * Cancels a schedule whole (no PIN: it only keeps money where it is): every occurrence still to run is CANCELLED at
 * once, and the run is woken to end, through a hand-off written in the same transaction. An occurrence running at that
 * moment finishes. A schedule with nothing left to run is 409.
 */
export async function cancelSchedule(config: Config, em: EntityManager, account: Pick<Account, 'id' | 'tenantId'>, scheduleId: string): Promise<ScheduleDetail> {
  const schedule = await findSchedule(em, account.tenantId, account.id, scheduleId);
  if (!schedule) throw notFound('Scheduled payment');
  await em.transactional(async (tx) => {
    if (!(await markScheduleCancelled(tx, account.tenantId, account.id, scheduleId))) throw new DomainError('SCHEDULE_NOT_ACTIVE');
    await insertHandOffs(tx, config.TEMPORAL_TASK_QUEUE, [scheduleChangedWake(runOf(config, schedule))], { dueNow: true });
  });
  return readSchedule(em, account, scheduleId);
}
cancelSchedule.raises = refusals('NOT_FOUND', 'SCHEDULE_NOT_ACTIVE');

/**
 * Cancels one occurrence still to run (SCHEDULED, on time or waiting for a retry); the others stay. One that ran, is
 * running or was cancelled is 409; a date the schedule does not have is 404. The run is woken to read the schedule again.
 */
export async function cancelOccurrence(config: Config, em: EntityManager, account: Pick<Account, 'id' | 'tenantId'>, scheduleId: string, date: string): Promise<ScheduleDetail> {
  const schedule = await findSchedule(em, account.tenantId, account.id, scheduleId);
  if (!schedule) throw notFound('Scheduled payment');
  await em.transactional(async (tx) => {
    const before = await markOccurrenceCancelled(tx, account.tenantId, scheduleId, date);
    if (before === null) throw notFound('Occurrence');
    if (before !== 'SCHEDULED') throw new DomainError('OCCURRENCE_NOT_CANCELLABLE', { status: before });
    await insertHandOffs(tx, config.TEMPORAL_TASK_QUEUE, [scheduleChangedWake(runOf(config, schedule))], { dueNow: true });
  });
  return readSchedule(em, account, scheduleId);
}
cancelOccurrence.raises = refusals('NOT_FOUND', 'OCCURRENCE_NOT_CANCELLABLE');
