import type { EntityManager } from '@mikro-orm/postgresql';

/** The database's clock (ISO 8601 UTC): the operators' probe shows that a worker reaches PostgreSQL. */
export async function databaseNow(em: EntityManager): Promise<string> {
  const [row] = await em.execute<{ now: Date }[]>('select now() as now');
  return new Date(row!.now).toISOString();
}
