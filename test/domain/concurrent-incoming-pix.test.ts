import { expect, test } from '@jest/globals';
import { sql } from '../support/db.ts';
import { domainDatabase, fund, onboardedHolder } from './support/accounts.ts';

const db = domainDatabase();

/**
 * Every incoming Pix of a tenant takes its amount from the tenant's one settlement account, so concurrent credits all
 * queue on that account. At a9afc99, bench/pix.ts found a tenant whose 16 fundings, made at once, summed to +7,000,000.00
 * (the settlement side missing from 7 of them; entries and balances agreed), and full suites saw a tenant at +10,000
 * now and then; since 362c658 (lock_accounts without a subquery, post_movements refusing a line on an account it does
 * not know) neither has been seen. This test keeps the invariant under the same shape of load; it did not reproduce the
 * old failure in process, so the cause is not proven (see the issue 24 note).
 */
test('sixteen incoming Pix at once on one tenant each take their amount from the settlement account', async () => {
  const em = db.em();
  const tenantId = await db.tenant({ pixIn: 1n });
  const holders = await Promise.all(Array.from({ length: 16 }, (_, i) => onboardedHolder(em, tenantId, `Recebedor ${i}`)));
  for (let round = 1; round <= 5; round++) {
    await Promise.all(holders.map((h) => fund(em, tenantId, h.accountId, 100_000n)));
    const [ledger] = await sql<{ total: string; settlement: string; credits: number }>(
      `select (select sum(balance_cents) from account where tenant_id = $1)::text as total,
              (select balance_cents from account where tenant_id = $1 and kind = 'SETTLEMENT')::text as settlement,
              (select count(*) from movement where tenant_id = $1 and source = 'SETTLEMENT')::int as credits`,
      [tenantId],
    );
    expect(ledger).toEqual({ total: '0', settlement: String(-100_000n * 16n * BigInt(round)), credits: 16 * round });
  }
});
