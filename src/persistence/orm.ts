import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, defineConfig, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { applyFunctions } from './functions.ts';
import { migrations } from './migrations/index.ts';

export type Orm = MikroORM;

const MIGRATION_LOCK = 727001;

/** The entities the ORM maps: each domain module owns its own, and the process that opens the database lists them (src/database.ts). */
export type Entities = EntitySchema[];

/**
 * The `application_name` of each process's connections: an operator tells them apart in `pg_stat_activity`, and a
 * batch payout's steps (in the worker) see there whether the api's request path is posting (src/batches/pacing.ts).
 */
export const APPLICATION_NAMES = { api: 'banking-api', worker: 'banking-worker' } as const;
export type ApplicationName = (typeof APPLICATION_NAMES)[keyof typeof APPLICATION_NAMES];

export function ormOptions(databaseUrl: string, entities: Entities, poolMax = 10, applicationName?: ApplicationName): Options {
  return defineConfig({
    clientUrl: databaseUrl,
    ...(applicationName ? { driverOptions: { application_name: applicationName } } : {}),
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList: migrations.map((m) => ({ name: m.name, class: m })),
      tableName: 'schema_migration',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    pool: { min: 0, max: poolMax },
    // bigint columns come back as bigint: money is never a float.
    forceUtcTimezone: true,
    debug: false,
  });
}

export async function openOrm(databaseUrl: string, entities: Entities, poolMax?: number, applicationName?: ApplicationName): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, entities, poolMax, applicationName));
}

/**
 * Applies pending migrations, then the SQL function sources that changed; safe when several processes start at once
 * (they queue on an advisory lock). Answers what was applied.
 */
export async function migrate(orm: Orm, databaseUrl: string, logger?: Logger): Promise<string[]> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await orm.migrator.up();
    const names = [...applied.map((m) => m.name), ...(await applyFunctions(lock))];
    if (names.length > 0) logger?.info({ migrations: names }, 'migrations and functions applied');
    return names;
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}
