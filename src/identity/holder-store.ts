/** The holder table's reads on every authenticated request, in plain SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { readBatched, type BatchedReadKind } from '../persistence/batched-read.ts';
import { entityColumns, readOnlyEntity } from '../persistence/prepared.ts';
import { Holder } from './entities.ts';

/**
 * A holder of the tenant, with the values `em.findOne` would give it, read only (`readOnlyEntity`). Every holder
 * request reads it (the token's holder); building the query through the ORM cost about twice the CPU of this statement
 * (bench/README.md).
 */
export async function findTenantHolder(em: EntityManager, id: string, tenantId: string): Promise<Holder | null> {
  const row = await readBatched(em, TENANT_HOLDER, [id, tenantId]);
  return row ? readOnlyEntity(em, Holder, row) : null;
}

/** Concurrent requests' reads leave together under load (`readBatched`). */
const TENANT_HOLDER: BatchedReadKind = {
  name: 'find_tenant_holder',
  one: (em) => `select ${entityColumns(em, Holder, 'h')} from holder h where h.id = $1 and h.tenant_id = $2`,
  many: (em) =>
    `select ${entityColumns(em, Holder, 'h')}, k.ord
       from unnest($1::uuid[], $2::uuid[]) with ordinality k(id, tenant_id, ord)
       cross join lateral (select * from holder h where h.id = k.id and h.tenant_id = k.tenant_id limit 1) h`,
};
