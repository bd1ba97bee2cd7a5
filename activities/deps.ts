import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { Orm } from '../src/persistence/orm.ts';

/**
 * What activities may touch: the database and configuration. Every activity file imports this module, and
 * activities/index.ts imports every activity file, so it lives apart to keep the import graph acyclic.
 */
export interface ActivityDeps {
  config: Config;
  orm: Orm;
  logger: Logger;
}
