import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenant',
  properties: {
    id: p.uuid().primary(),
    name: p.string(),
    /** Tokens from `/authenticate/clients` may write without the holder's PIN. */
    pinExempt: p.boolean(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Tenant = InferEntity<typeof Tenant>;

/** `X-Tenant-Api-Key` credentials (`tnk_…`), used by a tenant's back end for `/authenticate/clients`. */
export const TenantApiKey = defineEntity({
  name: 'TenantApiKey',
  tableName: 'tenant_api_key',
  properties: {
    id: p.string().primary(),
    tenantId: p.uuid(),
    prefix: p.string().unique(),
    secretHash: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  },
});
export type TenantApiKey = InferEntity<typeof TenantApiKey>;

/** `{api_url}` bearer keys (`pak_…`), each scoped to a set of Pix accounts of one tenant. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.string().primary(),
    tenantId: p.uuid(),
    prefix: p.string().unique(),
    secretHash: p.string(),
    pixAccountIds: p.array().columnType('text[]'),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  },
});
export type ApiKey = InferEntity<typeof ApiKey>;
