import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { entities } from '../../src/database.ts';
import { ormOptions } from '../../src/persistence/orm.ts';
import { withClient, type BaselineManifest } from './dump.ts';

/** Restores the baselines that dump.ts wrote, and reads a database's schema to compare it with another's. */
export const readBaselineManifest = (dir: string): BaselineManifest => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BaselineManifest;

/** Rebuilds the baseline's database in the empty database at `databaseUrl`: its migrations, its functions, its rows. */
export async function restoreBaseline(databaseUrl: string, dir: string): Promise<BaselineManifest> {
  const manifest = readBaselineManifest(dir);
  const options = ormOptions(databaseUrl, entities, 2);
  const known = options.migrations!.migrationsList as Array<{ name: string }>;
  const prefix = known.slice(0, manifest.migrations.length).map((m) => m.name);
  if (prefix.join() !== manifest.migrations.join()) throw new Error('the baseline ran migrations this tree does not have, in this order');
  const orm = await MikroORM.init(options);
  try {
    await orm.migrator.up({ to: manifest.migrations.at(-1)! });
  } finally {
    await orm.close();
  }
  await withClient(databaseUrl, async (client) => {
    await client.query('begin');
    // As pg_dump's restores do: a function's body is checked when it runs, not against functions created after it.
    await client.query('set local check_function_bodies = off');
    for (const f of manifest.functions) {
      await client.query(readFileSync(join(dir, 'functions', f.file), 'utf8'));
      await client.query('insert into schema_function (name, checksum) values ($1, $2)', [f.name, f.checksum]);
    }
    // Rows go in as they were, in any table order: foreign keys and triggers are not checked while loading.
    await client.query(`set local session_replication_role = replica`);
    for (const table of manifest.tables) {
      const rows = readFileSync(join(dir, 'tables', `${table}.json`), 'utf8');
      const { rows: columns } = await client.query<{ name: string; identity: string }>(
        `select attname as name, attidentity as identity from pg_attribute
          where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
        [table],
      );
      const list = columns.map((c) => pg.escapeIdentifier(c.name)).join(', ');
      const overriding = columns.some((c) => c.identity === 'a') ? 'overriding system value' : '';
      // A migration may have written rows of its own (a relay's cursor): the version's rows replace them.
      await client.query(`delete from ${pg.escapeIdentifier(table)}`);
      await client.query(`insert into ${pg.escapeIdentifier(table)} (${list}) ${overriding} select ${list} from json_populate_recordset(null::${pg.escapeIdentifier(table)}, $1::json)`, [rows]);
    }
    for (const s of manifest.sequences) await client.query('select setval($1::regclass, $2::bigint, $3)', [s.name, s.lastValue, s.isCalled]);
    await client.query('commit');
    await passRecordedTransactionIds(client, manifest.tables);
  });
  return manifest;
}

/**
 * Transaction ids the rows recorded (the outbox's events, the webhook relay's cursor) were counted by the baseline's
 * own cluster, which had got further than a younger one restoring them may have. An upgrade in place keeps its
 * cluster, whose next transaction always comes after them; left behind, the relay would pass over every new event
 * until this cluster caught up. So transactions are spent, one commit each, until the next one is past them all.
 */
async function passRecordedTransactionIds(client: pg.Client, tables: string[]): Promise<void> {
  const { rows: columns } = await client.query<{ table: string; column: string }>(
    `select attrelid::regclass::text as table, attname as column from pg_attribute
      where attrelid = any($1::regclass[]) and atttypid = 'xid8'::regtype and attnum > 0 and not attisdropped`,
    [tables],
  );
  if (columns.length === 0) return;
  const recorded = columns.map((c) => `select max(${pg.escapeIdentifier(c.column)}) as id from ${pg.escapeIdentifier(c.table)}`).join(' union all ');
  // A DO block may commit when it is its own statement: one round trip spends them all.
  await client.query(`do $$
    declare last_recorded xid8 := (select max(id) from (${recorded}) r);
    begin
      while pg_current_xact_id() <= last_recorded loop commit; end loop;
    end $$`);
}

/** The baselines kept in the repository, oldest first. */
export const BASELINES_DIR = new URL('./baselines/', import.meta.url).pathname;
export const baselineDirs = (): string[] =>
  readdirSync(BASELINES_DIR)
    .sort()
    .map((d) => join(BASELINES_DIR, d));

/**
 * The schema as PostgreSQL's catalog describes it, one line per object, sorted: tables and their columns, constraints,
 * indexes, functions, triggers, views, sequences and types of the public schema. Two databases with equal lines have
 * the same schema and the same functions.
 */
export async function schemaFingerprint(databaseUrl: string): Promise<string[]> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ line: string }>(`
      select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
             || case when a.attnotnull then ' not null' else '' end
             || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
             || case when a.attidentity <> '' then ' identity ' || a.attidentity::text else '' end
             || case when a.attgenerated <> '' then ' generated' else '' end as line
        from pg_attribute a
        join pg_class c on c.oid = a.attrelid and c.relkind in ('r', 'p', 'v', 'm', 'c')
        join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where a.attnum > 0 and not a.attisdropped
      union all
      select 'constraint ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
        from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      union all
      select 'index ' || pg_get_indexdef(i.indexrelid)
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      union all
      select 'function ' || pg_get_functiondef(p.oid)
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'public'
       where p.prokind in ('f', 'p')
      union all
      select 'trigger ' || pg_get_triggerdef(t.oid)
        from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
       where not t.tgisinternal
      union all
      select 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid)
        from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public' where c.relkind in ('v', 'm')
      union all
      select 'sequence ' || s.sequencename || ' ' || s.data_type::text || ' start ' || s.start_value || ' increment ' || s.increment_by
        from pg_sequences s where s.schemaname = 'public'
      union all
      select 'type ' || t.typname || ' ' || t.typtype::text
        from pg_type t join pg_namespace n on n.oid = t.typnamespace and n.nspname = 'public'
       where t.typtype in ('e', 'c', 'd') and not exists (select 1 from pg_class c where c.reltype = t.oid and c.relkind <> 'c')
      union all
      select 'extension ' || e.extname from pg_extension e
      order by 1`);
    return rows.map((r) => r.line);
  });
}
