/** The `fee_schedule` table's SQL: a tenant's schedule (account_id null) and accounts' overrides. */
import type { EntityManager } from '@mikro-orm/postgresql';

export const FEE_FIELDS = ['tevOut', 'tevIn', 'pixOut', 'pixIn', 'qrOut'] as const;
export type FeeField = (typeof FEE_FIELDS)[number];
export type FeeSchedule = Record<FeeField, bigint>;

const COLUMN: Record<FeeField, string> = { tevOut: 'tev_out_cents', tevIn: 'tev_in_cents', pixOut: 'pix_out_cents', pixIn: 'pix_in_cents', qrOut: 'qr_out_cents' };

/**
 * For each account, the fees in force: its own value, else its tenant's, else 0 (decisions.md), by the rule every
 * posting applies (`fee_schedule_of`, src/ledger/sql/rules.sql); one query for any number of accounts.
 */
export async function schedulesInForce(em: EntityManager, accountIds: string[]): Promise<Map<string, FeeSchedule>> {
  const rows = await em.execute<({ id: string } & Record<FeeField, string>)[]>(
    `select a.id, f.tev_out::text as "tevOut", f.tev_in::text as "tevIn", f.pix_out::text as "pixOut", f.pix_in::text as "pixIn",
            f.qr_out::text as "qrOut"
       from account a
      cross join fee_schedule_of(a.id, a.tenant_id) f
      where a.id in (?)`,
    [accountIds],
  );
  return new Map(rows.map((r) => [r.id, Object.fromEntries(FEE_FIELDS.map((f) => [f, BigInt(r[f])])) as FeeSchedule]));
}

/** The tenant's own schedule as stored (null where unset), or null when it has none. */
export async function tenantSchedule(em: EntityManager, tenantId: string): Promise<Record<FeeField, string | null> | null> {
  const [row] = await em.execute<Record<FeeField, string | null>[]>(
    `select ${FEE_FIELDS.map((f) => `${COLUMN[f]}::text as "${f}"`).join(', ')} from fee_schedule where tenant_id = ? and account_id is null`,
    [tenantId],
  );
  return row ?? null;
}

/** Sets the given fields of a tenant's schedule (accountId null) or of an account's override; the others are kept. */
export async function upsertSchedule(em: EntityManager, tenantId: string, accountId: string | null, values: Partial<FeeSchedule>): Promise<void> {
  const fields = FEE_FIELDS.filter((f) => values[f] !== undefined);
  const columns = fields.map((f) => COLUMN[f]);
  await em.execute(
    `insert into fee_schedule (tenant_id, account_id, ${columns.join(', ')}) values (?, ?, ${columns.map(() => '?').join(', ')})
     on conflict (tenant_id, account_id) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()`,
    [tenantId, accountId, ...fields.map((f) => values[f]!.toString())],
  );
}
