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

/** What a tenant's receipts carry (white label): its brand name (its name when none is set) and logo. */
export interface TenantBrand {
  name: string;
  logo: Buffer | null;
  logoType: 'image/png' | 'image/jpeg' | null;
}

export async function tenantBrand(em: EntityManager, tenantId: string): Promise<TenantBrand | null> {
  const [row] = await em.execute<{ name: string; logo: Buffer | null; logo_type: TenantBrand['logoType'] }[]>(
    'select coalesce(brand_name, name) as name, brand_logo as logo, brand_logo_type as logo_type from tenant where id = ?',
    [tenantId],
  );
  return row ? { name: row.name, logo: row.logo, logoType: row.logo_type } : null;
}

/** Sets the brand; a logo left out keeps the one set before. False when no tenant has this id. */
export async function setTenantBrand(em: EntityManager, tenantId: string, name: string, logo: { bytes: Buffer; type: 'image/png' | 'image/jpeg' } | null): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update tenant set brand_name = ?, brand_logo = coalesce(?::bytea, brand_logo), brand_logo_type = coalesce(?, brand_logo_type)
      where id = ? returning id`,
    [name, logo?.bytes ?? null, logo?.type ?? null, tenantId],
  );
  return rows.length > 0;
}
