import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { notFound, refusals, validationError } from '../shared/errors.ts';
import { getTenant } from '../tenants/service.ts';
import { FEE_FIELDS, schedulesInForce, upsertSchedule, type FeeSchedule } from './store.ts';

/**
 * The fee schedule in force for each account: the account's own value, else its tenant's, else 0 (decisions.md).
 * One query for any number of accounts.
 */
export async function feesFor(em: EntityManager, accountIds: string[]): Promise<Map<string, FeeSchedule>> {
  return schedulesInForce(em, accountIds);
}

export async function feeScheduleOf(em: EntityManager, accountId: string): Promise<FeeSchedule> {
  const fees = (await feesFor(em, [accountId])).get(accountId);
  if (!fees) throw notFound('Account');
  return fees;
}
feeScheduleOf.raises = refusals('NOT_FOUND');

/** Sets some fields of a tenant's schedule, or of one account's override; the others keep their values. */
export async function setFees(em: EntityManager, tenantId: string, accountId: string | null, values: Partial<FeeSchedule>): Promise<void> {
  await getTenant(em, tenantId);
  if (accountId && !(await em.findOne(Account, { id: accountId, tenantId }, { fields: ['id'] }))) throw notFound('Account');
  const fields = FEE_FIELDS.filter((f) => values[f] !== undefined);
  if (fields.length === 0) throw validationError('Give at least one fee to set');
  await upsertSchedule(em, tenantId, accountId, values);
}

/** decisions.md: `GET /v1/pix-accounts/:accountId/fees`, every value a string of cents. */
export function feesView(pixAccountId: string, f: FeeSchedule) {
  return { pixAccountId, ...feeCentsView(f) };
}

/** A schedule's values as the API names them, each a string of cents. */
export function feeCentsView(f: FeeSchedule) {
  return {
    tevOutFeeCents: f.tevOut.toString(),
    tevInFeeCents: f.tevIn.toString(),
    pixOutFeeCents: f.pixOut.toString(),
    pixInFeeCents: f.pixIn.toString(),
    qrCodeOutFeeCents: f.qrOut.toString(),
  };
}
