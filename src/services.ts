import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openOrm, type Orm } from './persistence/orm.ts';
import { lazyTemporal, type Temporal } from './temporal/connection.ts';
import { createCredentialCache, type CredentialCache } from './tenants/credential-cache.ts';
import { PixDebitQueue } from './pix/payout-debits.ts';
import { SettlementQueue } from './transfers/settlement-queue.ts';
import type { SandboxTevOutcome } from '../workflows/contracts/tev.ts';

/** What the HTTP apps and the operator commands share: configuration, logger, database and Temporal client. */
export interface Services {
  config: Config;
  logger: Logger;
  orm: Orm;
  temporal: Temporal;
  /** Verified credentials, kept until revoked (every instance hears the revocation). */
  credentials: CredentialCache;
  /** The request path's TEV settlement, batched under load. */
  settlements: SettlementQueue;
  /** The request path's Pix debits, batched under load. */
  pixDebits: PixDebitQueue;
  /**
   * The transfers whose outcome comes later instead of at once, and how (the sandbox's ,97 and ,98,
   * src/sandbox/tev-outcomes.ts); none in production.
   */
  deferredTevOutcome?: ((amountCents: bigint) => SandboxTevOutcome | null) | undefined;
}

/**
 * Opens the database; Temporal is connected lazily, so the api runs (and says so on /health) while it is away.
 * `deferredTevOutcome` is the sandbox's when the process runs one (src/main.ts).
 */
export async function openServices(config: Config, logger: Logger, deferredTevOutcome?: Services['deferredTevOutcome']): Promise<Services> {
  const orm = await openOrm(config.DATABASE_URL, config.DATABASE_POOL_MAX);
  return {
    config,
    logger,
    orm,
    temporal: lazyTemporal(config),
    credentials: createCredentialCache(config.DATABASE_URL, logger),
    settlements: new SettlementQueue(orm.em, config),
    pixDebits: new PixDebitQueue(orm.em, config),
    deferredTevOutcome,
  };
}

export async function closeServices(services: Services): Promise<void> {
  await services.credentials.close();
  await services.temporal.connection.close();
  await services.orm.close();
}
