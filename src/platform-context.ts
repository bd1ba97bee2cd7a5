import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Orm } from './persistence/orm.ts';
import { lazyTemporal, type Temporal } from './temporal/connection.ts';
import { createCredentialCache, type CredentialCache } from './tenants/credential-cache.ts';

/**
 * What the use cases share in every process that runs them (the api's requests, the worker's activities):
 * configuration, logger, database and Temporal client.
 */
export interface ServiceContext {
  config: Config;
  logger: Logger;
  orm: Orm;
  temporal: Temporal;
}

/** What the HTTP apps share besides: the credential cache their authenticators read. */
export interface PlatformContext extends ServiceContext {
  /** Verified credentials, kept until revoked (every instance hears the revocation). */
  credentials: CredentialCache;
}

/** The context over the opened database; Temporal is connected lazily, so the api runs (and says so on /health) while it is away. */
export function platformContext(config: Config, logger: Logger, orm: Orm): PlatformContext {
  return { config, logger, orm, temporal: lazyTemporal(config), credentials: createCredentialCache(config.DATABASE_URL, logger) };
}

export async function closePlatform(platform: PlatformContext): Promise<void> {
  await platform.credentials.close();
  await platform.temporal.connection.close();
  await platform.orm.close();
}
