/**
 * The scheduled payments' tables (migration 20261124001200): `scheduled_payment` and `scheduled_payment_occurrence`.
 * Every statement names the tenant.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PixKeyType } from '../pix/keys.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { OccurrenceStatus } from '../../workflows/contracts/scheduled-payment.ts';
import type { PlannedOccurrence, Recurrence } from './recurrence.ts';

/** Whom a scheduled payment pays: a Pix key (with its owner's name when scheduled), or an account of the tenant. */
export type ScheduledTarget =
  | { kind: 'PIX_KEY'; pixKey: string; pixKeyType: PixKeyType; beneficiaryName: string }
  | { kind: 'TEV'; branch: string; account: string };

/** Through which API the schedule was made: its TEVs carry it as their origin. */
export type ScheduleOrigin = 'HOLDER_API' | 'INTEGRATION_API';

/** ACTIVE while an occurrence is still to run; FINISHED once none is; CANCELLED once cancelled whole. */
export type ScheduleStatus = 'ACTIVE' | 'FINISHED' | 'CANCELLED';

export interface Schedule {
  id: string;
  tenantId: string;
  accountId: string;
  origin: ScheduleOrigin;
  target: ScheduledTarget;
  amountCents: string;
  description: string | null;
  date: string;
  /** `HH:MM:SS`, São Paulo. */
  time: string;
  recurrence: Recurrence | null;
  requestHash: string;
  status: ScheduleStatus;
  /** The next open occurrence's time (its due time, or its retry's); null when none is open. */
  nextRunAt: string | null;
  createdAt: string;
  cancelledAt: string | null;
  /** `created_at` with microseconds: the listing cursor. */
  position: string;
}

interface ScheduleRow {
  id: string;
  tenant_id: string;
  account_id: string;
  origin: ScheduleOrigin;
  kind: 'PIX_KEY' | 'TEV';
  pix_key: string | null;
  pix_key_type: PixKeyType | null;
  beneficiary_name: string | null;
  branch: string | null;
  account_number: string | null;
  amount_cents: string;
  description: string | null;
  first_date: string;
  time_of_day: string;
  frequency: Recurrence['frequency'] | null;
  day_of_month: number | null;
  occurrence_count: number | null;
  until_date: string | null;
  request_hash: string;
  status: ScheduleStatus;
  next_run_at: string | null;
  created_at: string;
  cancelled_at: string | null;
  position: string;
}

function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    origin: row.origin,
    target:
      row.kind === 'PIX_KEY'
        ? { kind: 'PIX_KEY', pixKey: row.pix_key!, pixKeyType: row.pix_key_type!, beneficiaryName: row.beneficiary_name! }
        : { kind: 'TEV', branch: row.branch!, account: row.account_number! },
    amountCents: row.amount_cents,
    description: row.description,
    date: row.first_date,
    time: row.time_of_day,
    recurrence: row.frequency && { frequency: row.frequency, dayOfMonth: row.day_of_month, count: row.occurrence_count, until: row.until_date },
    requestHash: row.request_hash,
    status: row.status,
    nextRunAt: row.next_run_at,
    createdAt: row.created_at,
    cancelledAt: row.cancelled_at,
    position: row.position,
  };
}

const SCHEDULE_COLUMNS = `s.id, s.tenant_id, s.account_id, s.origin, s.kind, s.pix_key, s.pix_key_type, s.beneficiary_name, s.branch, s.account_number,
  s.amount_cents::text as amount_cents, s.description, to_char(s.first_date, 'YYYY-MM-DD') as first_date, to_char(s.time_of_day, 'HH24:MI:SS') as time_of_day,
  s.frequency, s.day_of_month, s.occurrence_count, to_char(s.until_date, 'YYYY-MM-DD') as until_date, s.request_hash,
  case when s.cancelled_at is not null then 'CANCELLED' when o.next_run_at is not null then 'ACTIVE' else 'FINISHED' end as status,
  ${isoUtc('o.next_run_at')} as next_run_at, ${isoUtc('s.created_at')} as created_at, ${isoUtc('s.cancelled_at')} as cancelled_at,
  ${isoUtc('s.created_at', 'US')} as position`;

/** The schedules with their earliest open occurrence. */
const SCHEDULES = `scheduled_payment s left join lateral (
    select min(next_attempt_at) as next_run_at from scheduled_payment_occurrence
     where schedule_id = s.id and status in ('SCHEDULED', 'RUNNING')) o on true`;

export interface NewSchedule {
  id: string;
  tenantId: string;
  accountId: string;
  origin: ScheduleOrigin;
  target: ScheduledTarget;
  amountCents: bigint;
  description: string | null;
  date: string;
  time: string;
  recurrence: Recurrence | null;
  idempotencyKey: string;
  requestHash: string;
}

/** Records a schedule with all its occurrences; false when the account already has one under this Idempotency-Key. */
export async function insertSchedule(em: EntityManager, s: NewSchedule, occurrences: PlannedOccurrence[]): Promise<boolean> {
  const t = s.target;
  const r = s.recurrence;
  const inserted = await em.execute<{ id: string }[]>(
    `insert into scheduled_payment (id, tenant_id, account_id, origin, kind, pix_key, pix_key_type, beneficiary_name, branch, account_number,
       amount_cents, description, first_date, time_of_day, frequency, day_of_month, occurrence_count, until_date, idempotency_key, request_hash)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::date, ?::time, ?, ?, ?, ?::date, ?, ?)
     on conflict (account_id, idempotency_key) do nothing
     returning id`,
    [
      s.id,
      s.tenantId,
      s.accountId,
      s.origin,
      t.kind,
      t.kind === 'PIX_KEY' ? t.pixKey : null,
      t.kind === 'PIX_KEY' ? t.pixKeyType : null,
      t.kind === 'PIX_KEY' ? t.beneficiaryName : null,
      t.kind === 'TEV' ? t.branch : null,
      t.kind === 'TEV' ? t.account : null,
      s.amountCents.toString(),
      s.description,
      s.date,
      s.time,
      r?.frequency ?? null,
      r?.dayOfMonth ?? null,
      r?.count ?? null,
      r?.until ?? null,
      s.idempotencyKey,
      s.requestHash,
    ],
  );
  if (inserted.length === 0) return false;
  await em.execute(
    `insert into scheduled_payment_occurrence (schedule_id, tenant_id, occurrence_date, due_at, next_attempt_at)
     select ?, ?, d, at, at from unnest(?::date[], ?::timestamptz[]) as o(d, at)`,
    [s.id, s.tenantId, `{${occurrences.map((o) => o.date).join(',')}}`, `{${occurrences.map((o) => o.dueAt.toISOString()).join(',')}}`],
  );
  return true;
}

export async function findSchedule(em: EntityManager, tenantId: string, accountId: string, scheduleId: string): Promise<Schedule | null> {
  const [row] = await em.execute<ScheduleRow[]>(`select ${SCHEDULE_COLUMNS} from ${SCHEDULES} where s.tenant_id = ? and s.account_id = ? and s.id = ?`, [
    tenantId,
    accountId,
    scheduleId,
  ]);
  return row ? toSchedule(row) : null;
}

/** A schedule by its id alone, for its own run (which knows its tenant). */
export async function scheduleById(em: EntityManager, tenantId: string, scheduleId: string): Promise<Schedule | null> {
  const [row] = await em.execute<ScheduleRow[]>(`select ${SCHEDULE_COLUMNS} from ${SCHEDULES} where s.tenant_id = ? and s.id = ?`, [tenantId, scheduleId]);
  return row ? toSchedule(row) : null;
}

export async function findScheduleByKey(em: EntityManager, tenantId: string, accountId: string, idempotencyKey: string): Promise<Schedule | null> {
  const [row] = await em.execute<ScheduleRow[]>(`select ${SCHEDULE_COLUMNS} from ${SCHEDULES} where s.tenant_id = ? and s.account_id = ? and s.idempotency_key = ?`, [
    tenantId,
    accountId,
    idempotencyKey,
  ]);
  return row ? toSchedule(row) : null;
}

/** The account's schedules, newest first, after the cursor's position. */
export async function listSchedulesOf(em: EntityManager, tenantId: string, accountId: string, after: { at: string; id: string } | null, limit: number): Promise<Schedule[]> {
  const rows = await em.execute<ScheduleRow[]>(
    `select ${SCHEDULE_COLUMNS} from ${SCHEDULES}
      where s.tenant_id = ? and s.account_id = ? ${after ? 'and (s.created_at, s.id) < (?::timestamptz, ?::uuid)' : ''}
      order by s.created_at desc, s.id desc limit ?`,
    [tenantId, accountId, ...(after ? [after.at, after.id] : []), limit],
  );
  return rows.map(toSchedule);
}

/** Cancels the schedule and its occurrences still to run, at once; null when it has none left (or is not the account's). */
export async function markScheduleCancelled(em: EntityManager, tenantId: string, accountId: string, scheduleId: string): Promise<boolean> {
  const cancelled = await em.execute<{ id: string }[]>(
    `update scheduled_payment set cancelled_at = now()
      where tenant_id = ? and account_id = ? and id = ? and cancelled_at is null
        and exists (select 1 from scheduled_payment_occurrence where schedule_id = scheduled_payment.id and status in ('SCHEDULED', 'RUNNING'))
      returning id`,
    [tenantId, accountId, scheduleId],
  );
  if (cancelled.length === 0) return false;
  await em.execute(
    `update scheduled_payment_occurrence set status = 'CANCELLED', finished_at = now() where tenant_id = ? and schedule_id = ? and status = 'SCHEDULED'`,
    [tenantId, scheduleId],
  );
  return true;
}

/**
 * Cancels one occurrence still to run (not running, not run): its status before, or null when the schedule has no
 * such date. Its row is locked first, so an attempt starting meanwhile comes wholly before or after.
 */
export async function markOccurrenceCancelled(em: EntityManager, tenantId: string, scheduleId: string, date: string): Promise<OccurrenceStatus | null> {
  const [row] = await em.execute<{ status: OccurrenceStatus }[]>(
    'select status from scheduled_payment_occurrence where tenant_id = ? and schedule_id = ? and occurrence_date = ?::date for update',
    [tenantId, scheduleId, date],
  );
  if (row?.status === 'SCHEDULED') {
    await em.execute(
      `update scheduled_payment_occurrence set status = 'CANCELLED', finished_at = now() where tenant_id = ? and schedule_id = ? and occurrence_date = ?::date`,
      [tenantId, scheduleId, date],
    );
  }
  return row?.status ?? null;
}

export interface Occurrence {
  scheduleId: string;
  date: string;
  dueAt: string;
  status: OccurrenceStatus;
  /** Attempts refused for insufficient balance so far. */
  attempts: number;
  nextAttemptAt: string;
  startedAt: string | null;
  /** Its first attempt started later than its due time allows (the platform was away): it ran as soon as it could. */
  late: boolean | null;
  finishedAt: string | null;
  tevId: string | null;
  payoutId: string | null;
  approvalRequestId: string | null;
  reason: string | null;
}

interface OccurrenceRow {
  schedule_id: string;
  occurrence_date: string;
  due_at: string;
  status: OccurrenceStatus;
  attempts: number;
  next_attempt_at: string;
  started_at: string | null;
  late: boolean | null;
  finished_at: string | null;
  tev_id: string | null;
  payout_id: string | null;
  approval_request_id: string | null;
  reason: string | null;
}

function toOccurrence(row: OccurrenceRow): Occurrence {
  return {
    scheduleId: row.schedule_id,
    date: row.occurrence_date,
    dueAt: row.due_at,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    startedAt: row.started_at,
    late: row.late,
    finishedAt: row.finished_at,
    tevId: row.tev_id,
    payoutId: row.payout_id,
    approvalRequestId: row.approval_request_id,
    reason: row.reason,
  };
}

const OCCURRENCE_COLUMNS = `o.schedule_id, to_char(o.occurrence_date, 'YYYY-MM-DD') as occurrence_date, ${isoUtc('o.due_at')} as due_at, o.status, o.attempts,
  ${isoUtc('o.next_attempt_at')} as next_attempt_at, ${isoUtc('o.started_at')} as started_at, o.late, ${isoUtc('o.finished_at')} as finished_at,
  o.tev_id, o.payout_id, o.approval_request_id, o.reason`;

/** The schedule's occurrences, by date. */
export async function occurrencesOf(em: EntityManager, tenantId: string, scheduleId: string): Promise<Occurrence[]> {
  const rows = await em.execute<OccurrenceRow[]>(
    `select ${OCCURRENCE_COLUMNS} from scheduled_payment_occurrence o where o.tenant_id = ? and o.schedule_id = ? order by o.occurrence_date`,
    [tenantId, scheduleId],
  );
  return rows.map(toOccurrence);
}

/** The schedule's earliest occurrence still to run, and whether the schedule is cancelled; null for no such schedule. */
export async function nextOpenOccurrence(
  em: EntityManager,
  tenantId: string,
  scheduleId: string,
): Promise<{ cancelled: boolean; next: { date: string; runAt: string } | null } | null> {
  const [row] = await em.execute<{ cancelled: boolean; date: string | null; run_at: string | null }[]>(
    `select s.cancelled_at is not null as cancelled, to_char(o.occurrence_date, 'YYYY-MM-DD') as date, ${isoUtc('o.next_attempt_at')} as run_at
       from scheduled_payment s
       left join lateral (select occurrence_date, next_attempt_at from scheduled_payment_occurrence
                           where schedule_id = s.id and status in ('SCHEDULED', 'RUNNING')
                           order by next_attempt_at, occurrence_date limit 1) o on true
      where s.tenant_id = ? and s.id = ?`,
    [tenantId, scheduleId],
  );
  if (!row) return null;
  return { cancelled: row.cancelled, next: row.date ? { date: row.date, runAt: row.run_at! } : null };
}

/** An occurrence as its attempt finds it, locked, with whether its schedule was cancelled and whether it is due by the database's clock. */
export interface LockedOccurrence extends Occurrence {
  scheduleCancelled: boolean;
  due: boolean;
}

export async function lockOccurrence(em: EntityManager, tenantId: string, scheduleId: string, date: string): Promise<LockedOccurrence | null> {
  const [row] = await em.execute<(OccurrenceRow & { schedule_cancelled: boolean; due: boolean })[]>(
    `select ${OCCURRENCE_COLUMNS}, s.cancelled_at is not null as schedule_cancelled, o.next_attempt_at <= now() as due
       from scheduled_payment_occurrence o join scheduled_payment s on s.id = o.schedule_id
      where o.tenant_id = ? and o.schedule_id = ? and o.occurrence_date = ?::date
      for update of o`,
    [tenantId, scheduleId, date],
  );
  return row ? { ...toOccurrence(row), scheduleCancelled: row.schedule_cancelled, due: row.due } : null;
}

/** The attempt starts: RUNNING, its first start recorded with whether it came later than `lateAfterMs` after the due time. */
export async function markRunning(em: EntityManager, tenantId: string, scheduleId: string, date: string, lateAfterMs: number): Promise<void> {
  await em.execute(
    `update scheduled_payment_occurrence
        set status = 'RUNNING', started_at = coalesce(started_at, now()),
            late = coalesce(late, now() > due_at + make_interval(secs => ?::double precision / 1000))
      where tenant_id = ? and schedule_id = ? and occurrence_date = ?::date and status = 'SCHEDULED'`,
    [lateAfterMs, tenantId, scheduleId, date],
  );
}

/** What an attempt came to, recorded once: the occurrence's final state, if it is still at the attempt that made it. */
export type AttemptRecord =
  | { status: 'PAID'; tevId: string | null; payoutId: string | null }
  | { status: 'HELD_FOR_APPROVAL'; approvalRequestId: string }
  | { status: 'FAILED'; reason: string };

export async function finishOccurrence(em: EntityManager, tenantId: string, scheduleId: string, date: string, attempt: number, record: AttemptRecord): Promise<Occurrence | null> {
  const [row] = await em.execute<OccurrenceRow[]>(
    `update scheduled_payment_occurrence o
        set status = ?, finished_at = now(), tev_id = ?, payout_id = ?, approval_request_id = ?, reason = ?
      where tenant_id = ? and schedule_id = ? and occurrence_date = ?::date and status = 'RUNNING' and attempts = ?
      returning ${OCCURRENCE_COLUMNS}`,
    [
      record.status,
      record.status === 'PAID' ? record.tevId : null,
      record.status === 'PAID' ? record.payoutId : null,
      record.status === 'HELD_FOR_APPROVAL' ? record.approvalRequestId : null,
      record.status === 'FAILED' ? record.reason : null,
      tenantId,
      scheduleId,
      date,
      attempt,
    ],
  );
  return row ? toOccurrence(row) : null;
}

/** An attempt refused for insufficient balance, to be tried again at `retryAt` under the next attempt's key. */
export async function scheduleRetry(em: EntityManager, tenantId: string, scheduleId: string, date: string, attempt: number, retryAt: Date, reason: string): Promise<Occurrence | null> {
  const [row] = await em.execute<OccurrenceRow[]>(
    `update scheduled_payment_occurrence o
        set status = 'SCHEDULED', attempts = attempts + 1, next_attempt_at = greatest(?::timestamptz, due_at), reason = ?
      where tenant_id = ? and schedule_id = ? and occurrence_date = ?::date and status = 'RUNNING' and attempts = ?
      returning ${OCCURRENCE_COLUMNS}`,
    [retryAt.toISOString(), reason, tenantId, scheduleId, date, attempt],
  );
  return row ? toOccurrence(row) : null;
}
