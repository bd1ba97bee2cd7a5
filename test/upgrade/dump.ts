import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A database of a previous landed version, kept in the repository as text (this machine has no pg_dump for the
 * embedded PostgreSQL's version):
 * - `manifest.json`: the commit it came from, the migrations it had run and the SQL function sources it had applied
 *   (name and checksum, in the order applied), and each table's sequences;
 * - `functions/<n>-<file>.sql`: the text of each function source as that version applied it;
 * - `tables/<table>.json`: every row, as PostgreSQL's own JSON of the row (numbers, bigints and times as it writes them).
 *
 * Restoring runs the same landed migrations (they never change: test/landed-migrations.test.ts), applies the old
 * function texts and loads the rows, which rebuilds that version's database exactly; `migrate` then upgrades it.
 *
 * This file is copied into the older version's tree by make-baseline.ts: it imports nothing of the platform.
 */
export interface BaselineManifest {
  commit: string;
  migrations: string[];
  functions: Array<{ name: string; checksum: string; file: string }>;
  tables: string[];
  sequences: Array<{ name: string; lastValue: string; isCalled: boolean }>;
}

/** Tables the restore rebuilds itself instead of loading (they record the schema, not data). */
const SCHEMA_TABLES = new Set(['schema_migration', 'schema_function']);

export async function withClient<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Writes the database at `databaseUrl` into `dir`, with the function texts this version applied. */
export async function dumpBaseline(databaseUrl: string, dir: string, commit: string, functionTexts: Map<string, string>): Promise<BaselineManifest> {
  return withClient(databaseUrl, async (client) => {
    mkdirSync(join(dir, 'functions'), { recursive: true });
    mkdirSync(join(dir, 'tables'), { recursive: true });
    const migrations = (await client.query<{ name: string }>('select name from schema_migration order by id')).rows.map((r) => r.name);
    const checksums = new Map((await client.query<{ name: string; checksum: string }>('select name, checksum from schema_function')).rows.map((r) => [r.name, r.checksum]));
    // In the order that version applies them (its FUNCTION_SOURCES), a function before its callers.
    const applied = [...functionTexts.keys()].filter((name) => checksums.has(name)).map((name) => ({ name, checksum: checksums.get(name)! }));
    const functions = applied.map((f, i) => {
      const text = functionTexts.get(f.name);
      if (text === undefined || createHash('sha256').update(text).digest('hex') !== f.checksum) throw new Error(`the text of ${f.name} is not the one the database applied`);
      const file = `${String(i + 1).padStart(2, '0')}-${f.name.replaceAll('/', '_')}`;
      writeFileSync(join(dir, 'functions', file), text);
      return { name: f.name, checksum: f.checksum, file };
    });
    const tables = (await client.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'public' order by tablename`)).rows
      .map((r) => r.name)
      .filter((t) => !SCHEMA_TABLES.has(t));
    for (const table of tables) {
      const { rows } = await client.query<{ rows: string }>(`select coalesce(json_agg(t order by t::text), '[]')::text as rows from ${pg.escapeIdentifier(table)} t`);
      writeFileSync(join(dir, 'tables', `${table}.json`), `${rows[0]!.rows}\n`);
    }
    const sequences: BaselineManifest['sequences'] = [];
    for (const { name } of (await client.query<{ name: string }>(`select sequencename as name from pg_sequences where schemaname = 'public' order by 1`)).rows) {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${pg.escapeIdentifier(name)}`);
      sequences.push({ name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
    }
    const manifest: BaselineManifest = { commit, migrations, functions, tables, sequences };
    writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  });
}

