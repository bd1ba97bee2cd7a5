import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound, refusals } from '../shared/errors.ts';
import { newCuid, newUuid } from '../shared/ids.ts';
import { centsToReais } from '../shared/money.ts';
import { debitsThisMonth } from '../ledger/store.ts';
import { Account } from './entities.ts';
import { findHolderAccount, insertHolderAccount } from './store.ts';

/** Every account of a tenant lives in this branch; the number comes from a sequence. */
export const AGENCY = '0001';
export const BANK = '000';

/** Creates the holder's account (PENDING until KYC approval); safe to repeat. */
export async function provisionHolderAccount(em: EntityManager, holder: { id: string; tenantId: string }): Promise<Account> {
  await insertHolderAccount(em, { id: newUuid(), tenantId: holder.tenantId, holderId: holder.id, bank: BANK, agency: AGENCY, pixAccountId: newCuid(), coreAccountId: newCuid() });
  return em.findOneOrFail(Account, { holderId: holder.id, kind: 'HOLDER' }, { refresh: true });
}

export async function setHolderAccountsStatus(em: EntityManager, holderId: string, status: Account['status']): Promise<void> {
  await em.nativeUpdate(Account, { holderId, kind: 'HOLDER' }, { status });
}

/** The holder's own account; another holder's (or tenant's) account id is indistinguishable from a missing one. */
export async function getOwnAccount(em: EntityManager, holder: { id: string; tenantId: string }, accountId: string): Promise<Account> {
  const account = await findHolderAccount(em, accountId, holder.id, holder.tenantId);
  if (!account) throw notFound('Account');
  return account;
}
getOwnAccount.raises = refusals('NOT_FOUND');


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
  const spending = await debitsThisMonth(em, accounts.map((a) => a.id));
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

/** The account as read (`getOwnAccount`, not managed) with its new goal written and answered. */
export async function setMonthlyGoal(em: EntityManager, account: Account, goalCents: bigint): Promise<AccountView> {
  await em.nativeUpdate(Account, { id: account.id }, { monthlyGoalCents: goalCents });
  const [view] = await accountViews(em, [{ ...account, monthlyGoalCents: goalCents }]);
  return view!;
}
