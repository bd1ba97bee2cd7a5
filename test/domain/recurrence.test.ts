/**
 * The dates of a scheduled payment (src/schedules/recurrence.ts), with the moment "now" given: weekly and monthly
 * recurrences, the month's last day for a day it lacks, count and until, the five-year horizon, São Paulo's calendar
 * and time (a date that is still today there while it is tomorrow in UTC), and the refusals naming their field.
 */
import { describe, expect, test } from '@jest/globals';
import { addYears, endOfDay, occurrenceDates, planOccurrences, type Recurrence, type ScheduleRule } from '../../src/schedules/recurrence.ts';
import { saoPauloInstant } from '../../src/shared/time.ts';

const monthly = (extra: Partial<Recurrence> = {}): Recurrence => ({ frequency: 'MONTHLY', dayOfMonth: null, count: null, until: null, ...extra });
const weekly = (extra: Partial<Recurrence> = {}): Recurrence => ({ frequency: 'WEEKLY', dayOfMonth: null, count: null, until: null, ...extra });
const rule = (date: string, recurrence: Recurrence | null = null, time = '06:00:00'): ScheduleRule => ({ date, time, recurrence });
/** 10:00 in São Paulo on 2026-11-24. */
const NOW = new Date('2026-11-24T13:00:00Z');

const refusal = (r: ScheduleRule, now = NOW) => {
  try {
    planOccurrences(r, now);
  } catch (err) {
    return err as { status: number; code: string; details: { path: string; message: string }[] };
  }
  throw new Error('not refused');
};

describe('monthly: the day of the month, or the month’s last day when it has none', () => {
  test('from the 31st: 31 Jan, 28 Feb (29 in a leap year), 31 Mar, 30 Apr, then back to the 31st', () => {
    expect(occurrenceDates(rule('2027-01-31', monthly({ count: 5 })), '2031-12-31')).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31']);
    expect(occurrenceDates(rule('2028-01-31', monthly({ count: 3 })), '2031-12-31')).toEqual(['2028-01-31', '2028-02-29', '2028-03-31']);
  });

  test('from the 30th and the 29th: February gives its last day, the other months their own day', () => {
    expect(occurrenceDates(rule('2027-01-30', monthly({ count: 3 })), '2031-12-31')).toEqual(['2027-01-30', '2027-02-28', '2027-03-30']);
    expect(occurrenceDates(rule('2027-12-29', monthly({ count: 3 })), '2031-12-31')).toEqual(['2027-12-29', '2028-01-29', '2028-02-29']);
  });

  test('dayOfMonth 31 from a date in a short month: its last day first; a day before the date: from the next month', () => {
    expect(occurrenceDates(rule('2027-02-10', monthly({ dayOfMonth: 31, count: 3 })), '2031-12-31')).toEqual(['2027-02-28', '2027-03-31', '2027-04-30']);
    expect(occurrenceDates(rule('2027-02-10', monthly({ dayOfMonth: 5, count: 2 })), '2031-12-31')).toEqual(['2027-03-05', '2027-04-05']);
  });

  test('across the year: December to January', () => {
    expect(occurrenceDates(rule('2026-12-15', monthly({ count: 3 })), '2031-12-31')).toEqual(['2026-12-15', '2027-01-15', '2027-02-15']);
  });

  test('until a date, inclusive', () => {
    expect(occurrenceDates(rule('2027-01-31', monthly({ until: '2027-04-30' })), '2031-12-31')).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']);
    expect(occurrenceDates(rule('2027-01-31', monthly({ until: '2027-04-29' })), '2031-12-31')).toEqual(['2027-01-31', '2027-02-28', '2027-03-31']);
  });
});

describe('weekly and single', () => {
  test('weekly: every seven days from the date, across months and years', () => {
    expect(occurrenceDates(rule('2026-12-24', weekly({ count: 3 })), '2031-12-31')).toEqual(['2026-12-24', '2026-12-31', '2027-01-07']);
    expect(occurrenceDates(rule('2026-12-24', weekly({ until: '2027-01-06' })), '2031-12-31')).toEqual(['2026-12-24', '2026-12-31']);
  });

  test('a single date is itself', () => {
    expect(occurrenceDates(rule('2026-12-24'), '2031-12-31')).toEqual(['2026-12-24']);
  });
});

describe('due moments, in São Paulo', () => {
  test('each occurrence is due at the time on its date, São Paulo time (UTC−3)', () => {
    const planned = planOccurrences(rule('2026-12-05', monthly({ count: 2 }), '08:30:00'), NOW);
    expect(planned.map((o) => [o.date, o.dueAt.toISOString()])).toEqual([
      ['2026-12-05', '2026-12-05T11:30:00.000Z'],
      ['2027-01-05', '2027-01-05T11:30:00.000Z'],
    ]);
  });

  test('the time zone database decides the offset: 2018 still had summer time (UTC−2)', () => {
    expect(saoPauloInstant('2018-12-01', '06:00:00').toISOString()).toBe('2018-12-01T08:00:00.000Z');
    expect(saoPauloInstant('2026-12-01', '06:00:00').toISOString()).toBe('2026-12-01T09:00:00.000Z');
  });

  test("an occurrence's day ends at São Paulo's midnight", () => {
    expect(endOfDay('2026-12-05').toISOString()).toBe('2026-12-06T03:00:00.000Z');
  });

  test('today later on is the future; a time that passed is not, whatever UTC says', () => {
    // 23:30 on the 24th in São Paulo is already the 25th in UTC.
    const lateEvening = new Date('2026-11-25T02:30:00Z');
    expect(planOccurrences(rule('2026-11-24', null, '23:45:00'), lateEvening).map((o) => o.dueAt.toISOString())).toEqual(['2026-11-25T02:45:00.000Z']);
    expect(refusal(rule('2026-11-24', null, '23:15:00'), lateEvening)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: [{ path: 'body.date' }] });
    // At the due moment itself: passed.
    expect(refusal(rule('2026-11-24', null, '10:00:00'))).toMatchObject({ details: [{ path: 'body.date', message: expect.stringContaining('in the future') }] });
    expect(refusal(rule('2026-11-23'))).toMatchObject({ details: [{ path: 'body.date' }] });
  });
});

describe('at most five years ahead', () => {
  const horizon = addYears('2026-11-24', 5);

  test('the horizon is five years from today in São Paulo, 29 February landing on the 28th', () => {
    expect(horizon).toBe('2031-11-24');
    expect(addYears('2028-02-29', 5)).toBe('2033-02-28');
  });

  test('weekly for five years fits; one occurrence more does not, and the answer says how many fit', () => {
    const fit = occurrenceDates(rule('2026-11-25', weekly()), horizon).length;
    expect(planOccurrences(rule('2026-11-25', weekly({ count: fit })), NOW)).toHaveLength(fit);
    expect(refusal(rule('2026-11-25', weekly({ count: fit + 1 })))).toMatchObject({
      details: [{ path: 'body.recurrence.count', message: expect.stringContaining(`at most ${fit} occurrences`) }],
    });
  });

  test('until beyond the horizon, or a date beyond it: refused naming the field', () => {
    expect(planOccurrences(rule('2026-12-01', monthly({ until: horizon })), NOW).at(-1)!.date).toBe('2031-11-01');
    expect(refusal(rule('2026-12-01', monthly({ until: '2031-11-25' })))).toMatchObject({ details: [{ path: 'body.recurrence.until' }] });
    expect(refusal(rule('2031-11-25'))).toMatchObject({ details: [{ path: 'body.date' }] });
  });

  test('until before the date, or with no date of the recurrence on or before it: refused', () => {
    expect(refusal(rule('2026-12-10', monthly({ until: '2026-12-09' })))).toMatchObject({ details: [{ path: 'body.recurrence.until' }] });
    expect(refusal(rule('2026-12-10', monthly({ dayOfMonth: 5, until: '2027-01-04' })))).toMatchObject({ details: [{ path: 'body.recurrence.until' }] });
  });
});
