import { sql } from './db.ts';

let tenantTables: Promise<string[]> | undefined;

/** Every table that carries a `tenant_id`, read from the catalogue so a new table is watched without editing tests. */
function tablesWithTenant(): Promise<string[]> {
  tenantTables ??= sql<{ table_name: string }>(
    `select table_name from information_schema.columns
      where column_name = 'tenant_id' and table_schema = current_schema() order by table_name`,
  ).then((rows) => rows.map((r) => r.table_name));
  return tenantTables;
}

/**
 * What a refused request must leave as it was: the row count of every tenant table (and of the ledger entries of the
 * tenant's accounts), every account's balance, status and goal, and every holder's state and PIN attempts.
 */
export async function tenantState(tenantId: string) {
  const counts: Record<string, number> = {};
  for (const table of await tablesWithTenant()) {
    counts[table] = (await sql(`select count(*)::int as n from ${table} where tenant_id = $1`, [tenantId]))[0].n;
  }
  counts.ledger_entry = (await sql('select count(*)::int as n from ledger_entry e join account a on a.id = e.account_id where a.tenant_id = $1', [tenantId]))[0].n;
  const accounts = await sql('select id, balance_cents, status, monthly_goal_cents from account where tenant_id = $1 order by id', [tenantId]);
  const holders = await sql(
    'select id, name, status, onboarding_step, pin_failed_attempts, pin_locked_at, pin_hash from holder where tenant_id = $1 order by id',
    [tenantId],
  );
  return { counts, accounts, holders };
}
