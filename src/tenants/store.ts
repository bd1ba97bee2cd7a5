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

/** A tenant key as the holder authenticator checks a client token's: its tenant, revoked or not, the tenant's PIN exemption. */
export interface TenantKeyRow {
  tenantId: string;
  revoked: boolean;
  pinExempt: boolean;
}

/** One read of the key and its tenant, null when there is no such key. */
export async function readTenantKey(em: EntityManager, keyId: string): Promise<TenantKeyRow | null> {
  const [row] = await em.execute<{ tenant_id: string; revoked: boolean; pin_exempt: boolean }[]>(
    'select k.tenant_id, k.revoked_at is not null as revoked, t.pin_exempt from tenant_api_key k join tenant t on t.id = k.tenant_id where k.id = ?',
    [keyId],
  );
  return row ? { tenantId: row.tenant_id, revoked: row.revoked, pinExempt: row.pin_exempt } : null;
}
