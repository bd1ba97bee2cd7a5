import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { issueCredential, parseCredential, secretMatches } from '../shared/credentials.ts';
import { DomainError, notFound, refusals, unauthorized, validationError } from '../shared/errors.ts';
import { newCuid, newUuid } from '../shared/ids.ts';
import { REVOCATION_CHANNEL, type CredentialCache, type CredentialRef } from './credential-cache.ts';
import { ApiKey, Tenant, TenantApiKey } from './entities.ts';
import { createTenantAccounts, notifyAtCommit, readTenantKey, setTenantBrand, tenantBrand, type TenantBrand } from './store.ts';

/** A tenant, with its own fee revenue and settlement accounts, in one transaction. */
export async function createTenant(em: EntityManager, input: { name: string; pinExempt: boolean }): Promise<Tenant> {
  return em.transactional(async (tx) => {
    const tenant = tx.create(Tenant, { id: newUuid(), name: input.name, pinExempt: input.pinExempt, createdAt: new Date() });
    await tx.flush();
    await createTenantAccounts(tx, tenant.id);
    return tenant;
  });
}

export async function findTenant(em: EntityManager, tenantId: string): Promise<Tenant | null> {
  return em.findOne(Tenant, { id: tenantId });
}

export async function getTenant(em: EntityManager, tenantId: string): Promise<Tenant> {
  const tenant = await findTenant(em, tenantId);
  if (!tenant) throw notFound('Tenant');
  return tenant;
}

export async function createTenantKey(em: EntityManager, pepper: string, tenantId: string): Promise<{ id: string; key: string }> {
  await getTenant(em, tenantId);
  const credential = issueCredential('tnk', pepper);
  const row = em.create(TenantApiKey, { id: newCuid(), tenantId, prefix: credential.prefix, secretHash: credential.secretHash, createdAt: new Date(), revokedAt: null });
  await em.flush();
  return { id: row.id, key: credential.key };
}

export async function revokeTenantKey(em: EntityManager, tenantId: string, id: string): Promise<{ id: string; revokedAt: string }> {
  const row = await em.findOne(TenantApiKey, { id, tenantId });
  if (!row) throw notFound('Tenant API key');
  row.revokedAt ??= new Date();
  await em.flush();
  await announceRevocation(em, `tnk:${row.id}`);
  return { id: row.id, revokedAt: row.revokedAt.toISOString() };
}

/** Checks an `X-Tenant-Api-Key` for the tenant of `X-Tenant-Id`; every failure is the same 401. */
export async function authenticateTenantKey(em: EntityManager, pepper: string, tenantId: string, raw: string | undefined): Promise<TenantApiKey> {
  const parsed = raw ? parseCredential('tnk', raw) : null;
  if (!parsed) throw unauthorized('TENANT_KEY_MISSING');
  const row = await em.findOne(TenantApiKey, { prefix: parsed.prefix });
  if (!row || row.tenantId !== tenantId || row.revokedAt || !secretMatches(parsed.secret, row.secretHash, pepper)) {
    throw unauthorized('TENANT_KEY_INVALID');
  }
  return row;
}
authenticateTenantKey.raises = refusals('UNAUTHORIZED');

/** Every api instance forgets the credential when the revocation commits (their caches LISTEN for it). */
const announceRevocation = (em: EntityManager, ref: CredentialRef) => notifyAtCommit(em, REVOCATION_CHANNEL, ref);

/** True while the tenant key that issued a client token is still valid (revocation ends its tokens at once). */
/**
 * A tenant key of the tenant that is not revoked, with what its client tokens may do: write without the PIN when the
 * tenant is PIN-exempt (set when the tenant is created, never changed, so it is cached with the key); null otherwise.
 */
export async function activeTenantKey(em: EntityManager, cache: CredentialCache, tenantId: string, keyId: string): Promise<{ pinExempt: boolean } | null> {
  const row = await cache.get(`tnk:${keyId}`, () => readTenantKey(em, keyId));
  return row && row.tenantId === tenantId && !row.revoked ? { pinExempt: row.pinExempt } : null;
}

export async function createApiKey(em: EntityManager, pepper: string, tenantId: string, pixAccountIds: string[]): Promise<{ id: string; key: string }> {
  await getTenant(em, tenantId);
  const unique = [...new Set(pixAccountIds)];
  if (unique.length === 0) throw validationError('An API key needs at least one Pix account');
  const known = await em.find(Account, { tenantId, kind: 'HOLDER', pixAccountId: { $in: unique } }, { fields: ['pixAccountId'] });
  const unknown = unique.filter((id) => !known.some((a) => a.pixAccountId === id));
  if (unknown.length > 0) throw new DomainError('PIX_ACCOUNTS_NOT_FOUND', { pixAccountIds: unknown });
  const credential = issueCredential('pak', pepper);
  const row = em.create(ApiKey, {
    id: newCuid(),
    tenantId,
    prefix: credential.prefix,
    secretHash: credential.secretHash,
    pixAccountIds: unique,
    createdAt: new Date(),
    revokedAt: null,
  });
  await em.flush();
  return { id: row.id, key: credential.key };
}

export async function revokeApiKey(em: EntityManager, id: string): Promise<{ id: string; revokedAt: string }> {
  const row = await em.findOne(ApiKey, { id });
  if (!row) throw notFound('API key');
  row.revokedAt ??= new Date();
  await em.flush();
  await announceRevocation(em, `pak:${row.prefix}`);
  return { id: row.id, revokedAt: row.revokedAt.toISOString() };
}

export interface ApiKeyPrincipal {
  apiKeyId: string;
  tenantId: string;
  pixAccountIds: string[];
}

/** Checks an `{api_url}` bearer key; every failure is the same 401. */
export async function authenticateApiKey(em: EntityManager, cache: CredentialCache, pepper: string, raw: string | undefined): Promise<ApiKeyPrincipal> {
  const parsed = raw ? parseCredential('pak', raw) : null;
  if (!parsed) throw unauthorized('API_KEY_MISSING');
  const row = await cache.get(`pak:${parsed.prefix}`, async () => {
    const key = await em.findOne(ApiKey, { prefix: parsed.prefix });
    return key && { id: key.id, tenantId: key.tenantId, secretHash: key.secretHash, pixAccountIds: key.pixAccountIds, revokedAt: key.revokedAt };
  });
  if (!row || row.revokedAt || !secretMatches(parsed.secret, row.secretHash, pepper)) throw unauthorized('API_KEY_INVALID');
  return { apiKeyId: row.id, tenantId: row.tenantId, pixAccountIds: row.pixAccountIds };
}
authenticateApiKey.raises = refusals('UNAUTHORIZED');

/** PNG and JPEG are what a PDF embeds as they are; told apart by their first bytes, not by a file name. */
function logoType(bytes: Buffer): 'image/png' | 'image/jpeg' | null {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

/** The largest logo a tenant may set: it is read with every PDF receipt. */
export const MAX_LOGO_BYTES = 256 * 1024;

/** `tenant:set-brand`: the name (and, when given, the logo) the tenant's receipts carry. */
export async function setBrand(em: EntityManager, tenantId: string, name: string, logo: Buffer | null): Promise<{ tenantId: string; brandName: string; logo: string | null }> {
  let type: 'image/png' | 'image/jpeg' | null = null;
  if (logo) {
    type = logoType(logo);
    if (!type) throw validationError('The logo must be a PNG or JPEG file', [{ path: 'logo', message: 'not a PNG or JPEG file' }]);
    if (logo.length > MAX_LOGO_BYTES) throw validationError('The logo is too large', [{ path: 'logo', message: `at most ${MAX_LOGO_BYTES} bytes` }]);
  }
  if (!(await setTenantBrand(em, tenantId, name, logo && type ? { bytes: logo, type } : null))) throw notFound('Tenant');
  const brand = (await tenantBrand(em, tenantId))!;
  return { tenantId, brandName: brand.name, logo: brand.logoType };
}

/** The brand a tenant's receipts carry. */
export async function brandOf(em: EntityManager, tenantId: string): Promise<TenantBrand> {
  const brand = await tenantBrand(em, tenantId);
  if (!brand) throw notFound('Tenant');
  return brand;
}
