import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { getTenant } from '../tenants/service.ts';

export const FEE_FIELDS = ['tevOut', 'tevIn', 'pixOut', 'pixIn', 'qrOut'] as const;
export type FeeField = (typeof FEE_FIELDS)[number];
export type FeeSchedule = Record<FeeField, bigint>;

const COLUMN: Record<FeeField, string> = { tevOut: 'tev_out_cents', tevIn: 'tev_in_cents', pixOut: 'pix_out_cents', pixIn: 'pix_in_cents', qrOut: 'qr_out_cents' };

/**
 * The fee schedule in force for each account: the account's own value, else its tenant's, else 0 (decisions.md).
 * One query for any number of accounts.
 */
export async function feesFor(em: EntityManager, accountIds: string[]): Promise<Map<string, FeeSchedule>> {
  const select = FEE_FIELDS.map((f) => `coalesce(own.${COLUMN[f]}, ten.${COLUMN[f]}, 0)::text as "${f}"`).join(', ');
  const rows = await em.execute<({ id: string } & Record<FeeField, string>)[]>(
    `select a.id, ${select}
       from account a
       left join fee_schedule own on own.account_id = a.id
       left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
      where a.id in (?)`,
    [accountIds],
  );
  return new Map(rows.map((r) => [r.id, Object.fromEntries(FEE_FIELDS.map((f) => [f, BigInt(r[f])])) as FeeSchedule]));
}

export async function feeScheduleOf(em: EntityManager, accountId: string): Promise<FeeSchedule> {
  const fees = (await feesFor(em, [accountId])).get(accountId);
  if (!fees) throw notFound('Account');
  return fees;
}

/** Sets some fields of a tenant's schedule, or of one account's override; the others keep their values. */
export async function setFees(em: EntityManager, tenantId: string, accountId: string | null, values: Partial<FeeSchedule>): Promise<void> {
  await getTenant(em, tenantId);
  if (accountId && !(await em.findOne(Account, { id: accountId, tenantId }, { fields: ['id'] }))) throw notFound('Account');
  const fields = FEE_FIELDS.filter((f) => values[f] !== undefined);
  if (fields.length === 0) throw new AppError(400, 'VALIDATION_ERROR', 'Give at least one fee to set');
  const columns = fields.map((f) => COLUMN[f]);
  await em.execute(
    `insert into fee_schedule (tenant_id, account_id, ${columns.join(', ')}) values (?, ?, ${columns.map(() => '?').join(', ')})
     on conflict (tenant_id, account_id) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()`,
    [tenantId, accountId, ...fields.map((f) => values[f]!.toString())],
  );
}

/** decisions.md: `GET /v1/pix-accounts/:accountId/fees`, every value a string of cents. */
export function feesView(pixAccountId: string, f: FeeSchedule) {
  return {
    pixAccountId,
    tevOutFeeCents: f.tevOut.toString(),
    tevInFeeCents: f.tevIn.toString(),
    pixOutFeeCents: f.pixOut.toString(),
    pixInFeeCents: f.pixIn.toString(),
    qrCodeOutFeeCents: f.qrOut.toString(),
  };
}
