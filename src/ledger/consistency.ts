import type { EntityManager } from '@mikro-orm/postgresql';

/** One tenant's ledger as the invariants see it. */
export interface TenantLedger {
  tenantId: string;
  /** The sum of every balance of the tenant, its settlement and fee revenue accounts included: 0 when every posting balanced. */
  sumCents: string;
  /** Accounts whose balance is not the sum of their entries. */
  accountsOffTheirEntries: number;
}

interface TenantLedgerRow {
  tenant_id: string;
  sum_cents: string;
  accounts_off: number;
}

const consistent = (t: TenantLedger) => t.sumCents === '0' && t.accountsOffTheirEntries === 0;

/**
 * Checks the ledger's invariants, per tenant (or for one): each tenant's balances sum to zero, and each balance is the
 * sum of its entries (no balance below zero but the settlement account's is a constraint of the table). Reads every entry of the tenants it checks: an
 * operator's check (`ledger:check`), for after an incident or an upgrade, not for the request path. Answers only the
 * tenants that break one.
 */
export async function checkLedger(em: EntityManager, tenantId: string | null): Promise<{ tenantsChecked: number; inconsistent: TenantLedger[] }> {
  const rows = await em.getConnection().execute<TenantLedgerRow[]>(
    `select a.tenant_id, sum(a.balance_cents)::text as sum_cents,
            (count(*) filter (where a.balance_cents <> coalesce(e.entries, 0)))::int as accounts_off
       from account a
       left join (select account_id, sum(amount_cents) as entries from ledger_entry group by account_id) e on e.account_id = a.id
      where ?::uuid is null or a.tenant_id = ?::uuid
      group by a.tenant_id
      order by a.tenant_id`,
    [tenantId, tenantId],
  );
  const tenants = rows.map((r) => ({ tenantId: r.tenant_id, sumCents: r.sum_cents, accountsOffTheirEntries: r.accounts_off }));
  return { tenantsChecked: tenants.length, inconsistent: tenants.filter((t) => !consistent(t)) };
}
