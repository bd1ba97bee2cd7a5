import { expect } from '@jest/globals';
import { sql } from './db.ts';

type Query = <T = any>(text: string, params?: unknown[]) => Promise<T[]>;

/**
 * The ledger's invariants for one tenant: every balance equals the sum of its entries, each entry's balanceAfter
 * is the running sum, and (every posting being zero-sum) all balances of the tenant, with its fee revenue and
 * settlement accounts, add up to zero. No holder balance is negative. `query`: the test database, or another one.
 */
export async function expectLedgerConsistent(tenantId: string, query: Query = sql): Promise<void> {
  const mismatched = await query(
    `select a.id, a.balance_cents, coalesce(sum(e.amount_cents), 0) as entries
       from account a left join ledger_entry e on e.account_id = a.id
      where a.tenant_id = $1
      group by a.id having a.balance_cents <> coalesce(sum(e.amount_cents), 0)`,
    [tenantId],
  );
  expect(mismatched).toEqual([]);
  const running = await query(
    `select id from (
       select e.id, e.balance_after_cents,
              sum(e.amount_cents) over (partition by e.account_id order by e.created_at, e.movement_id, e.line) as running
         from ledger_entry e join account a on a.id = e.account_id
        where a.tenant_id = $1) x
      where balance_after_cents <> running`,
    [tenantId],
  );
  expect(running).toEqual([]);
  const [total] = await query(`select coalesce(sum(balance_cents), 0)::text as total from account where tenant_id = $1`, [tenantId]);
  expect(total.total).toBe('0');
  const negative = await query(`select id from account where tenant_id = $1 and kind <> 'SETTLEMENT' and balance_cents < 0`, [tenantId]);
  expect(negative).toEqual([]);
  // The ledger tables carry no foreign keys (the posting code checks them): every reference must still hold.
  const orphans = await query(
    `select m.id from movement m left join account a on a.id = m.account_id
      where m.tenant_id = $1 and (a.id is null or a.tenant_id <> m.tenant_id)
     union all
     select e.id from ledger_entry e left join movement m on m.id = e.movement_id join account a on a.id = e.account_id
      where a.tenant_id = $1 and (m.id is null or m.account_id <> e.account_id)
     union all
     select t.id from tev_transfer t left join movement s on s.id = t.source_movement_id left join movement d on d.id = t.destination_movement_id
      where t.tenant_id = $1 and t.status = 'DONE' and (s.id is null or d.id is null or s.account_id <> t.source_account_id or d.account_id <> t.destination_account_id)`,
    [tenantId],
  );
  expect(orphans).toEqual([]);
}

export async function balanceOf(accountId: string): Promise<bigint> {
  const [row] = await sql('select balance_cents from account where id = $1', [accountId]);
  return BigInt(row.balance_cents);
}
