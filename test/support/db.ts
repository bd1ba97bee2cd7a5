import pg from 'pg';

let pool: pg.Pool | undefined;

/** Direct SQL against the run's database, for assertions the API does not show (hashes, ledger rows). */
export async function sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  pool ??= new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 3 });
  const { rows } = await pool.query(text, params);
  return rows as T[];
}

export async function closeDb(): Promise<void> {
  await pool?.end();
  pool = undefined;
}
