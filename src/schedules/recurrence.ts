import { validationError, type ErrorDetail } from '../shared/errors.ts';
import { saoPauloDate, saoPauloInstant } from '../shared/time.ts';

/**
 * The dates of a scheduled payment, and when each is due. A schedule is one date, or a recurrence from its date:
 * weekly (the same weekday), or monthly on a day of the month (the date's own, unless another is given), on the
 * month's last day when the month has no such day (31 → 30 April, 28 or 29 February), for a number of occurrences or
 * until a date (inclusive). Each occurrence is due at the schedule's time on its date, in America/Sao_Paulo. Nothing
 * is scheduled more than five years ahead. Pure: the moment "now" is the caller's, so the tests set it.
 */

export type Frequency = 'WEEKLY' | 'MONTHLY';

export interface Recurrence {
  frequency: Frequency;
  /** MONTHLY only: 1 to 31; the date's own day when absent. */
  dayOfMonth: number | null;
  /** Exactly one of `count` and `until`. */
  count: number | null;
  /** `YYYY-MM-DD`, the last date that may have an occurrence. */
  until: string | null;
}

export interface ScheduleRule {
  /** `YYYY-MM-DD` in São Paulo: the payment's date, or the first of a recurrence. */
  date: string;
  /** `HH:MM:SS` in São Paulo. */
  time: string;
  recurrence: Recurrence | null;
}

export interface PlannedOccurrence {
  date: string;
  dueAt: Date;
}

/** How far ahead a schedule may reach: its last occurrence at most this many years after the day it is made. */
export const HORIZON_YEARS = 5;

const DAY_MS = 86_400_000;
const parts = (date: string) => date.split('-').map(Number) as [number, number, number];
const iso = (year: number, month: number, day: number) => `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

export const addDays = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The `day` of a month (1-12), or the month's last day when it has fewer. */
export function dayOfMonth(year: number, month: number, day: number): string {
  return iso(year, month, Math.min(day, daysIn(year, month)));
}

/** The same day `years` later (29 February: the 28th in a common year). */
export const addYears = (date: string, years: number): string => {
  const [year, month, day] = parts(date);
  return dayOfMonth(year + years, month, day);
};

/** The n-th month after the date's own (n = 0: its month), on `day` or the month's last. */
function monthly(date: string, n: number, day: number): string {
  const [year, month] = parts(date);
  const index = year * 12 + (month - 1) + n;
  return dayOfMonth(Math.floor(index / 12), (index % 12) + 1, day);
}

/**
 * The dates of a rule, in order, up to `last` (inclusive), the rule's own end (its count or until) applied. A monthly
 * recurrence starts with the first of its days on or after the rule's date.
 */
export function occurrenceDates(rule: Pick<ScheduleRule, 'date' | 'recurrence'>, last: string): string[] {
  const r = rule.recurrence;
  if (!r) return rule.date <= last ? [rule.date] : [];
  const end = r.until !== null && r.until < last ? r.until : last;
  const wanted = r.count ?? Number.POSITIVE_INFINITY;
  const day = r.dayOfMonth ?? parts(rule.date)[2];
  const dates: string[] = [];
  for (let n = 0; dates.length < wanted; n++) {
    const date = r.frequency === 'WEEKLY' ? addDays(rule.date, 7 * n) : monthly(rule.date, n, day);
    if (date < rule.date) continue;
    if (date > end) break;
    dates.push(date);
  }
  return dates;
}

/**
 * Every occurrence of a new schedule with its due moment, or 400 naming what is wrong: a first occurrence not in the
 * future (São Paulo time), or a schedule reaching beyond five years from today (too many occurrences, an `until` or a
 * date too far).
 */
export function planOccurrences(rule: ScheduleRule, now: Date): PlannedOccurrence[] {
  const horizon = addYears(saoPauloDate(now), HORIZON_YEARS);
  const refuse = (detail: ErrorDetail) => validationError('The schedule cannot be made as asked', [detail]);
  const r = rule.recurrence;
  if (r?.until != null && r.until < rule.date) throw refuse({ path: 'body.recurrence.until', message: 'must be on or after date' });
  if (rule.date > horizon) throw refuse({ path: 'body.date', message: `must be at most ${HORIZON_YEARS} years ahead (${horizon})` });
  if (r?.until != null && r.until > horizon) throw refuse({ path: 'body.recurrence.until', message: `must be at most ${HORIZON_YEARS} years ahead (${horizon})` });
  const dates = occurrenceDates(rule, horizon);
  if (r?.count != null && dates.length < r.count) {
    throw refuse({ path: 'body.recurrence.count', message: `at most ${dates.length} occurrences fit in ${HORIZON_YEARS} years from today (until ${horizon})` });
  }
  if (dates.length === 0) throw refuse({ path: 'body.recurrence.until', message: 'no date of the recurrence falls on or before it' });
  const planned = dates.map((date) => ({ date, dueAt: saoPauloInstant(date, rule.time) }));
  if (planned[0]!.dueAt.getTime() <= now.getTime()) {
    throw refuse({ path: 'body.date', message: `must be in the future: ${planned[0]!.date} ${rule.time} in São Paulo has passed` });
  }
  return planned;
}

/** When an occurrence's São Paulo day ends: its retries are made within it. */
export const endOfDay = (date: string): Date => saoPauloInstant(addDays(date, 1), '00:00:00');
