import { command } from '../cli/command.ts';
import { Account } from '../accounts/entities.ts';
import { notFound } from '../shared/errors.ts';
import { z } from '../shared/zod.ts';
import { feeCentsView, feeScheduleOf, feesView, setFees } from './service.ts';
import { FEE_FIELDS, tenantSchedule, type FeeSchedule } from './store.ts';

const cents = z.coerce.bigint().refine((v) => v >= 0n && v <= 100_000_000n, 'must be whole cents between 0 and 100000000').optional();

export const feeCommands = {
  'fees:set': command({
    summary: "Set the tenant's fee schedule, or one account's override (--account); prints the schedule in force",
    usage: '--tenant T [--account A] [--tev-out-cents N] [--tev-in-cents N] [--pix-out-cents N] [--pix-in-cents N] [--qr-out-cents N]',
    flags: z.object({
      tenant: z.uuid(),
      account: z.uuid().optional(),
      'tev-out-cents': cents,
      'tev-in-cents': cents,
      'pix-out-cents': cents,
      'pix-in-cents': cents,
      'qr-out-cents': cents,
    }),
    async run({ em }, f) {
      await setFees(em, f.tenant, f.account ?? null, {
        tevOut: f['tev-out-cents'],
        tevIn: f['tev-in-cents'],
        pixOut: f['pix-out-cents'],
        pixIn: f['pix-in-cents'],
        qrOut: f['qr-out-cents'],
      });
      if (f.account) {
        const account = await em.findOneOrFail(Account, { id: f.account });
        return { tenantId: f.tenant, accountId: f.account, ...feesView(account.pixAccountId, await feeScheduleOf(em, f.account)) };
      }
      const stored = await tenantSchedule(em, f.tenant);
      if (!stored) throw notFound('Fee schedule');
      const schedule = Object.fromEntries(FEE_FIELDS.map((field) => [field, BigInt(stored[field] ?? '0')])) as FeeSchedule;
      return { tenantId: f.tenant, ...feeCentsView(schedule) };
    },
  }),
};
