import { Account } from '../accounts/entities.ts';
import { Holder } from '../identity/entities.ts';
import { ApiKey, Tenant, TenantApiKey } from '../tenants/entities.ts';

/** Every entity the ORM maps; each domain module owns its own definitions. */
export const entities = [Tenant, TenantApiKey, ApiKey, Holder, Account];
