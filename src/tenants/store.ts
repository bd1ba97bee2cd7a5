/** The tenants module's SQL beyond its entities. */
import type { EntityManager } from '@mikro-orm/postgresql';

/** The tenant's own FEE_REVENUE and SETTLEMENT accounts (`create_tenant_accounts`, migration 1000). */
export async function createTenantAccounts(em: EntityManager, tenantId: string): Promise<void> {
  await em.execute('select create_tenant_accounts(?)', [tenantId]);
}

/** A NOTIFY, delivered to the listeners when the caller's transaction commits (at once outside one). */
export async function notifyAtCommit(em: EntityManager, channel: string, payload: string): Promise<void> {
  await em.execute('select pg_notify(?, ?)', [channel, payload]);
}
