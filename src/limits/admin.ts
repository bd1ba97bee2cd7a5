import { command } from '../cli/command.ts';
import { z } from '../shared/zod.ts';
import { setLimitPolicy } from './policy.ts';
import { LIMIT_FIELDS, type LimitValues } from './store.ts';

const cents = z.coerce.bigint({ error: 'must be whole cents' }).refine((v) => v >= 0n && v <= 100_000_000_000n, 'must be whole cents between 0 and 100000000000').optional();

const centsView = (v: LimitValues) => ({
  perTransactionCents: v.perTransaction.toString(),
  dayCents: v.day.toString(),
  nightCents: v.night.toString(),
  monthCents: v.month.toString(),
});

export const limitCommands = {
  'limits:set': command({
    summary: "Set a tenant's transaction limits for a holder type and channel: the defaults and the most a holder may raise each to",
    usage:
      '--tenant T --holder-type PERSON|COMPANY --channel PIX|TEV [--per-transaction-cents N] [--day-cents N] [--night-cents N] [--month-cents N] ' +
      '[--max-per-transaction-cents N] [--max-day-cents N] [--max-night-cents N] [--max-month-cents N]',
    flags: z.object({
      tenant: z.uuid(),
      'holder-type': z.enum(['PERSON', 'COMPANY']),
      channel: z.enum(['PIX', 'TEV']),
      'per-transaction-cents': cents,
      'day-cents': cents,
      'night-cents': cents,
      'month-cents': cents,
      'max-per-transaction-cents': cents,
      'max-day-cents': cents,
      'max-night-cents': cents,
      'max-month-cents': cents,
    }),
    async run({ em }, f) {
      const flag = { perTransaction: 'per-transaction-cents', day: 'day-cents', night: 'night-cents', month: 'month-cents' } as const;
      const read = (prefix: '' | 'max-') =>
        Object.fromEntries(LIMIT_FIELDS.flatMap((field) => (f[`${prefix}${flag[field]}`] === undefined ? [] : [[field, f[`${prefix}${flag[field]}`]!]]))) as Partial<LimitValues>;
      const policy = await setLimitPolicy(em, f.tenant, f['holder-type'], f.channel, { defaults: read(''), maximums: read('max-') });
      return { tenantId: f.tenant, holderType: f['holder-type'], channel: f.channel, ...centsView(policy.defaults), maximum: centsView(policy.maximums) };
    },
  }),
};
