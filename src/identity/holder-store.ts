/** The holder table's reads on every authenticated request, in plain SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Holder } from './entities.ts';

/**
 * A holder of the tenant, managed by `em` as `em.findOne` would answer it. Every holder request reads it (the token's
 * holder); building the query through the ORM cost about twice the CPU of this statement (bench/README.md).
 */
export async function findTenantHolder(em: EntityManager, id: string, tenantId: string): Promise<Holder | null> {
  const [row] = await em.execute<Record<string, unknown>[]>('select * from holder where id = ? and tenant_id = ?', [id, tenantId]);
  return row ? em.map(Holder, row) : null;
}
