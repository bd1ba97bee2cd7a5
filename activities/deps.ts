import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { PaymentContext } from '../src/payments/context.ts';
import type { Orm } from '../src/persistence/orm.ts';

/**
 * What activities may touch: the database and configuration, and the payment use cases' context for the payments
 * the worker makes itself (a scheduled payment's occurrences). Every activity file imports this module, and
 * activities/index.ts imports every activity file, so it lives apart to keep the import graph acyclic.
 */
export interface ActivityDeps {
  config: Config;
  orm: Orm;
  logger: Logger;
  payments: PaymentContext;
}
