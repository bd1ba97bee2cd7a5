/** The receipts module's SQL: the receipts issued, under their authentication code. */
import type { EntityManager } from '@mikro-orm/postgresql';

export interface ReceiptRow {
  code: string;
  tenant_id: string;
  fields: Record<string, unknown>;
}

/** Records an issued receipt; the same fields give the same code, so issuing it again records nothing more. */
export async function recordReceipt(em: EntityManager, r: { code: string; tenantId: string; accountId: string; movementId: string; fields: object }): Promise<void> {
  await em.execute('insert into receipt (code, tenant_id, account_id, movement_id, fields) values (?, ?, ?, ?, ?) on conflict (code) do nothing', [
    r.code,
    r.tenantId,
    r.accountId,
    r.movementId,
    JSON.stringify(r.fields),
  ]);
}

export async function findReceipt(em: EntityManager, code: string): Promise<ReceiptRow | null> {
  const [row] = await em.execute<ReceiptRow[]>('select code, tenant_id::text as tenant_id, fields from receipt where code = ?', [code]);
  return row ?? null;
}
