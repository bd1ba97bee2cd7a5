import { Account } from './accounts/entities.ts';
import { Holder } from './identity/entities.ts';
import { openOrm, type ApplicationName, type Orm } from './persistence/orm.ts';
import { ApiKey, Tenant, TenantApiKey } from './tenants/entities.ts';

/**
 * Every entity the ORM maps; each domain module owns its own definitions. Listed here, above the modules, so that
 * persistence/ (below them all) never imports one.
 */
export const entities = [Tenant, TenantApiKey, ApiKey, Holder, Account];

/** The platform's database, as every process opens it (the api and the worker under their names, `APPLICATION_NAMES`). */
export const openDatabase = (databaseUrl: string, poolMax?: number, applicationName?: ApplicationName): Promise<Orm> => openOrm(databaseUrl, entities, poolMax, applicationName);
