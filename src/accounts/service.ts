import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, notFound } from '../shared/errors.ts';
import { newCuid, newUuid } from '../shared/ids.ts';
import { centsToReais } from '../shared/money.ts';
import { Account } from './entities.ts';

/** Every account of a tenant lives in this branch; the number comes from a sequence. */
export const AGENCY = '0001';
export const BANK = '000';

/** Creates the holder's account (PENDING until KYC approval); safe to repeat. */
export async function provisionHolderAccount(em: EntityManager, holder: { id: string; tenantId: string }): Promise<Account> {
  await em.execute(
    `insert into account (id, tenant_id, holder_id, kind, bank, agency, number, pix_account_id, core_account_id, status)
     values (?, ?, ?, 'HOLDER', ?, ?, nextval('account_number_seq')::text, ?, ?, 'PENDING')
     on conflict (holder_id) where kind = 'HOLDER' do nothing`,
    [newUuid(), holder.tenantId, holder.id, BANK, AGENCY, newCuid(), newCuid()],
  );
  return em.findOneOrFail(Account, { holderId: holder.id, kind: 'HOLDER' }, { refresh: true });
}

export async function setHolderAccountsStatus(em: EntityManager, holderId: string, status: Account['status']): Promise<void> {
  await em.nativeUpdate(Account, { holderId, kind: 'HOLDER' }, { status });
}

/** The holder's own account; another holder's (or tenant's) account id is indistinguishable from a missing one. */
export async function getOwnAccount(em: EntityManager, holder: { id: string; tenantId: string }, accountId: string): Promise<Account> {
  const account = await em.findOne(Account, { id: accountId, holderId: holder.id, tenantId: holder.tenantId });
  if (!account) throw notFound('Account');
  return account;
}

/** Money may leave or enter an account only once KYC approved it. */
export function assertAccountOperational(account: Account): void {
  if (account.status !== 'APPROVED') {
    throw new AppError(403, 'ACCOUNT_NOT_APPROVED', `The account is ${account.status}; operations need an APPROVED account`);
  }
}

/** Debits (PRIMARY and FEE) net of reversals since the start of the current month in America/Sao_Paulo. */
async function monthlySpending(em: EntityManager, accountIds: string[]): Promise<Map<string, bigint>> {
  if (accountIds.length === 0) return new Map();
  const rows = await em.execute<{ account_id: string; spent: string }[]>(
    `select account_id,
            coalesce(sum(-amount_cents) filter (where amount_cents < 0), 0)
              - coalesce(sum(amount_cents) filter (where kind = 'REVERSAL' and amount_cents > 0), 0) as spent
       from ledger_entry
      where account_id in (?)
        and created_at >= (date_trunc('month', now() at time zone 'America/Sao_Paulo') at time zone 'America/Sao_Paulo')
      group by account_id`,
    [accountIds],
  );
  return new Map(rows.map((r) => [r.account_id, BigInt(r.spent)]));
}

export interface AccountView {
  id: string;
  /** The account's id in the integration API (`/v1/pix-accounts/:accountId`), so a holder's integrator can find it. */
  pixAccountId: string;
  bank: string;
  agency: string;
  number: string;
  balance: number;
  status: Account['status'];
  monthlyGoal: number;
  monthlySpending: number;
  savingsProgress: number;
}

/**
 * Section 2.2. `monthlyGoal` is the most the holder wants to spend this month; `savingsProgress` is the share of
 * that goal not yet spent, as a percentage from 0 to 100 with two decimals (0 when no goal is set).
 */
export async function accountViews(em: EntityManager, accounts: Account[]): Promise<AccountView[]> {
  const spending = await monthlySpending(em, accounts.map((a) => a.id));
  return accounts.map((a) => {
    const spent = spending.get(a.id) ?? 0n;
    const goal = a.monthlyGoalCents;
    const progress = goal > 0n && spent < goal ? Number(((goal - spent) * 10_000n) / goal) / 100 : 0;
    return {
      id: a.id,
      pixAccountId: a.pixAccountId,
      bank: a.bank,
      agency: a.agency,
      number: a.number,
      balance: centsToReais(a.balanceCents),
      status: a.status,
      monthlyGoal: centsToReais(goal),
      monthlySpending: centsToReais(spent),
      savingsProgress: progress,
    };
  });
}

export async function holderAccounts(em: EntityManager, holderId: string): Promise<Account[]> {
  return em.find(Account, { holderId, kind: 'HOLDER' }, { orderBy: { createdAt: 'asc' } });
}

export async function setMonthlyGoal(em: EntityManager, account: Account, goalCents: bigint): Promise<AccountView> {
  account.monthlyGoalCents = goalCents;
  await em.flush();
  const [view] = await accountViews(em, [account]);
  return view!;
}
