/** Wall-clock texts the interface names. Everything is stored in UTC. */

const SAO_PAULO = 'America/Sao_Paulo';

function partsIn(date: Date, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const offset = get('timeZoneName').replace('GMT', '') || '+00:00';
  return { date: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}:${get('minute')}:${get('second')}`, offset };
}

/** `paymentDate`: `YYYY-MM-DD HH:mm:ss-03:00` in America/Sao_Paulo, space separator. */
export function paymentDate(date: Date): string {
  const p = partsIn(date, SAO_PAULO);
  return `${p.date} ${p.time}${p.offset}`;
}

/** ISO 8601 with the America/Sao_Paulo offset (webhook records' `createdAt`). */
export function isoSaoPaulo(date: Date): string {
  const p = partsIn(date, SAO_PAULO);
  return `${p.date}T${p.time}.${String(date.getUTCMilliseconds()).padStart(3, '0')}${p.offset}`;
}

/** The wall clock in America/Sao_Paulo at `date`: `YYYY-MM-DD` and `HH:mm:ss`, as a holder writes a moment to pay. */
export function saoPauloWallClock(date: Date): { date: string; time: string } {
  const { date: day, time } = partsIn(date, SAO_PAULO);
  return { date: day, time };
}

/** The calendar date in America/Sao_Paulo at `date`: `YYYY-MM-DD`. */
export const saoPauloDate = (date: Date): string => partsIn(date, SAO_PAULO).date;

/** The offset of America/Sao_Paulo at `date`, in ms (-03:00 → -10_800_000). */
function saoPauloOffsetMs(date: Date): number {
  const [, sign, hours, minutes] = /^([+-])(\d{2}):(\d{2})$/.exec(partsIn(date, SAO_PAULO).offset) ?? [];
  if (!sign) return 0;
  return (sign === '-' ? -1 : 1) * (Number(hours) * 3_600_000 + Number(minutes) * 60_000);
}

/**
 * The moment a São Paulo wall-clock date and time (`YYYY-MM-DD`, `HH:MM:SS`) name. The offset is the time zone
 * database's for that moment (−03:00 since 2019; the summer times before it, or any the country brings back, too).
 */
export function saoPauloInstant(date: string, time: string): Date {
  const wall = Date.parse(`${date}T${time}Z`);
  const guess = wall - saoPauloOffsetMs(new Date(wall));
  return new Date(wall - saoPauloOffsetMs(new Date(guess)));
}

export class DeadlineExceeded extends Error {}

/** The work's result, or a DeadlineExceeded rejection once `ms` pass (the work itself goes on). */
export function within<T>(work: Promise<T>, ms: number, message = `no answer within ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(message)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
