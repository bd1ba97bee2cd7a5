import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * SQL functions kept as source files, beside the code that calls them, instead of inside migrations. A landed
 * migration never changes, so a function written in one could only be corrected by copying it whole into the next;
 * these files change in place. After the migrations, `applyFunctions` runs each file whose text differs from what the
 * database last applied (`create or replace`), and records its checksum in `schema_function`: a fresh database and an
 * upgraded one end with the same functions.
 *
 * Listed in the order they are applied (a function before the ones that call it). Paths are relative to `src/`.
 */
export const FUNCTION_SOURCES = [
  'ledger/sql/rules.sql',
  'ledger/sql/posting.sql',
  'ledger/sql/settle_tev.sql',
  'ledger/sql/settle_tev_batch.sql',
  'ledger/sql/post_pix_debits.sql',
  'ledger/sql/debit_pix_payout_batch.sql',
  'ledger/sql/debit_pix_payout.sql',
  'ledger/sql/credit_incoming_pix.sql',
  'ledger/sql/refund_pix_charge.sql',
  'ledger/sql/settle_pix_payout.sql',
  'ledger/sql/return_pix_payout.sql',
  'ledger/sql/debit_recorded_pix_payout.sql',
  'pix/sql/provider_notifications.sql',
  'identity/sql/holder_standing.sql',
] as const;

const SRC = new URL('../', import.meta.url);

export interface FunctionSource {
  name: string;
  sql: string;
  checksum: string;
}

export function readFunctionSources(): FunctionSource[] {
  return FUNCTION_SOURCES.map((name) => {
    const sql = readFileSync(new URL(name, SRC), 'utf8');
    return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

/** Applies the function sources whose text changed, in one transaction; answers the names applied. */
export async function applyFunctions(client: pg.Client): Promise<string[]> {
  const applied: string[] = [];
  await client.query('begin');
  try {
    const { rows } = await client.query<{ name: string; checksum: string }>('select name, checksum from schema_function');
    const known = new Map(rows.map((r) => [r.name, r.checksum]));
    const sources = readFunctionSources();
    // A source file that is gone dropped its functions itself (its successor's `drop function if exists`); the record of
    // it goes too, so an upgraded database records the same sources as a fresh one.
    await client.query('delete from schema_function where not (name = any($1))', [sources.map((s) => s.name)]);
    for (const source of sources) {
      if (known.get(source.name) === source.checksum) continue;
      await client.query(source.sql);
      await client.query(
        `insert into schema_function (name, checksum) values ($1, $2)
         on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`,
        [source.name, source.checksum],
      );
      applied.push(source.name);
    }
    await client.query('commit');
    return applied;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}
