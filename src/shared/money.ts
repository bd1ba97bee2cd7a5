import { z } from './zod.ts';

/**
 * Money is integer cents (bigint) inside the platform. Reais appear only at the edges the interface names, and are
 * parsed from their decimal text exactly: no float arithmetic ever touches an amount.
 */

/** Largest amount accepted in one operation: R$ 1 billion. */
export const MAX_AMOUNT_CENTS = 100_000_000_000n;

const REAIS = /^(\d{1,13})(?:\.(\d{1,2}))?$/;

/** Parses a reais amount ("10.5", 10.5, "0.01") into cents; null when it is not a plain decimal with ≤ 2 places. */
export function reaisToCents(value: number | string): bigint | null {
  // A JSON number arrives as a double; its shortest decimal text is exactly what the client wrote (10.1 → "10.1").
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const match = REAIS.exec(text);
  if (!match) return null;
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

/** Cents → reais for the fields the interface gives in reais (balances, statement amounts). Exact for |c| < 2^53. */
export function centsToReais(cents: bigint): number {
  return Number(cents) / 100;
}

/**
 * Reais fields (`amount`, `monthlyGoal`): a JSON number, never text, with at most two decimal places. A string is
 * refused rather than read, so `"10"` and `" 10 "` cannot mean an amount by accident.
 */
function reaisFrom(minimumCents: bigint, rule: string) {
  return z.number({ error: 'must be a JSON number of reais (not text), e.g. 10.50' }).transform((value, ctx) => {
    const cents = reaisToCents(value);
    if (cents === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an amount in reais with at most 2 decimal places, e.g. 10.50' });
      return z.NEVER;
    }
    if (cents < minimumCents || cents > MAX_AMOUNT_CENTS) {
      ctx.addIssue({ code: 'custom', message: rule });
      return z.NEVER;
    }
    return cents;
  });
}

/** A payment's `amount` in reais, as cents: greater than 0. */
export const reaisAmountSchema = reaisFrom(1n, `must be greater than 0 and at most ${MAX_AMOUNT_CENTS / 100n} reais`);

/** A limit in reais, as cents, where 0 means none (the monthly goal). */
export const reaisLimitSchema = reaisFrom(0n, `must be 0 or more and at most ${MAX_AMOUNT_CENTS / 100n} reais`);

/**
 * `*Cents` fields: a whole number of cents from `minimumCents`, as a JSON integer or a string of digits only: no blank,
 * sign, point or exponent (`" 10 "` is refused, not trimmed).
 */
function centsFrom(minimumCents: bigint) {
  return z
    .union([z.number(), z.string()])
    .transform((value, ctx) => {
      const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
      if (!/^\d{1,15}$/.test(text)) {
        ctx.addIssue({ code: 'custom', message: 'must be a whole number of cents, digits only, e.g. "1050"' });
        return z.NEVER;
      }
      const cents = BigInt(text);
      if (cents < minimumCents || cents > MAX_AMOUNT_CENTS) {
        ctx.addIssue({ code: 'custom', message: `must be between ${minimumCents} and ${MAX_AMOUNT_CENTS} cents` });
        return z.NEVER;
      }
      return cents;
    })
    .openapi({ type: ['string', 'integer'], pattern: '^\\d{1,15}$', minimum: Number(minimumCents), example: '1050' });
}

/** An amount's `*Cents`: greater than 0. */
export const centsAmountSchema = centsFrom(1n);

/** A limit's `*Cents` (transaction limits): the same form, 0 included (nothing may be sent). */
export const centsLimitSchema = centsFrom(0n);
