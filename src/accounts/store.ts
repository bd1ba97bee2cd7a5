/** The `account` table's SQL beyond what the Account entity maps (balances change only through the ledger store). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { readBatched, type BatchedReadKind } from '../persistence/batched-read.ts';
import { entityColumns, readOnlyEntity } from '../persistence/prepared.ts';
import { Account } from './entities.ts';

/** The holder's account, PENDING, numbered from the branch's sequence; nothing when the holder already has one. */
export async function insertHolderAccount(
  em: EntityManager,
  a: { id: string; tenantId: string; holderId: string; bank: string; agency: string; pixAccountId: string; coreAccountId: string },
): Promise<void> {
  await em.execute(
    `insert into account (id, tenant_id, holder_id, kind, bank, agency, number, pix_account_id, core_account_id, status)
     values (?, ?, ?, 'HOLDER', ?, ?, nextval('account_number_seq')::text, ?, ?, 'PENDING')
     on conflict (holder_id) where kind = 'HOLDER' do nothing`,
    [a.id, a.tenantId, a.holderId, a.bank, a.agency, a.pixAccountId, a.coreAccountId],
  );
}

/**
 * A holder account of the tenant by branch and number as the client wrote them (`holder_account_by_number`), with
 * its branch and number as stored: what a trusted contact records. Null when the tenant has none.
 */
export async function holderAccountByNumber(em: EntityManager, tenantId: string, branch: string, account: string): Promise<{ id: string; branch: string; account: string } | null> {
  const [row] = await em.execute<{ id: string; branch: string; account: string }[]>(
    'select a.id, a.agency as branch, a.number as account from account a where a.id = holder_account_by_number(?, ?, ?)',
    [tenantId, branch, account],
  );
  return row ?? null;
}

/**
 * The holder's account of the tenant, with the values `em.findOne` would give it, read only (`readOnlyEntity`), and
 * its refusal computed as the entity's formula does (`account_refusal`). Read on every payment; building the query
 * through the ORM cost about twice the CPU of this statement (bench/README.md).
 */
export async function findHolderAccount(em: EntityManager, accountId: string, holderId: string, tenantId: string): Promise<Account | null> {
  const row = await readBatched(em, HOLDER_ACCOUNT, [accountId, holderId, tenantId]);
  return row ? readOnlyEntity(em, Account, row) : null;
}

/** Concurrent requests' reads leave together under load (`readBatched`). */
const HOLDER_ACCOUNT: BatchedReadKind = {
  name: 'find_holder_account',
  one: (em) =>
    `select ${entityColumns(em, Account, 'a')}, account_refusal(a.status, h.status, h.onboarding_step) as money_refusal
       from account a left join holder h on h.id = a.holder_id
      where a.id = $1 and a.holder_id = $2 and a.tenant_id = $3`,
  many: (em) =>
    `select ${entityColumns(em, Account, 'a')}, account_refusal(a.status, h.status, h.onboarding_step) as money_refusal, k.ord
       from unnest($1::uuid[], $2::uuid[], $3::uuid[]) with ordinality k(id, holder_id, tenant_id, ord)
       cross join lateral (select * from account a where a.id = k.id and a.holder_id = k.holder_id and a.tenant_id = k.tenant_id limit 1) a
       left join lateral (select * from holder h where h.id = a.holder_id limit 1) h on true`,
};
