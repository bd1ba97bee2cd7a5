/** The holder table's reads on every authenticated request, in plain SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { entityColumns, queryPrepared } from '../persistence/prepared.ts';
import { Holder } from './entities.ts';

/**
 * A holder of the tenant, managed by `em` as `em.findOne` would answer it. Every holder request reads it (the token's
 * holder); building the query through the ORM cost about twice the CPU of this statement (bench/README.md).
 */
export async function findTenantHolder(em: EntityManager, id: string, tenantId: string): Promise<Holder | null> {
  const [row] = await queryPrepared<Record<string, unknown>>(em, 'find_tenant_holder', `select ${entityColumns(em, Holder, 'h')} from holder h where h.id = $1 and h.tenant_id = $2`, [id, tenantId]);
  return row ? em.map(Holder, row) : null;
}
