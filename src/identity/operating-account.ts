import { MONEY_REFUSALS, type Account } from '../accounts/entities.ts';
import { getOwnAccount } from '../accounts/service.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import type { HolderAuth } from './authenticator.ts';
import { Holder } from './entities.ts';

/**
 * The "operating account" rule, for both hosts: the account may move money, by the ledger's rule
 * (`account_refusal`, src/ledger/sql/rules.sql) read with the account (`moneyRefusal`): the holder is not blocked
 * (else 401), is through KYC (else 403) and the account APPROVED (else 403). It lives with the holders, above
 * accounts/ and tenants/: it takes either host's caller.
 */
function assertOperating(account: Pick<Account, 'moneyRefusal'>): void {
  if (account.moneyRefusal) throw new DomainError(account.moneyRefusal);
}
assertOperating.raises = refusals(...MONEY_REFUSALS);

/** The caller's own account, ready to move money. */
export async function operatingAccount(auth: HolderAuth, accountId: string): Promise<Account> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  assertOperating(account);
  return account;
}
operatingAccount.raises = refusals(getOwnAccount, assertOperating);

/**
 * What a payment needs of the paying account: whose it is, its branch, and whether it may move money. Not who approves
 * its payments: the debit decides dual approval on the row it locks.
 */
export type AccountStanding = Readonly<Pick<Account, 'id' | 'tenantId' | 'holderId' | 'agency' | 'status' | 'moneyRefusal'>>;

/**
 * The caller's own account, ready to move money, as `operatingAccount` answers it, without its balance: kept with the
 * holder between requests (`HolderAuth.kept`), and forgotten with it when the account's status or owner changes, or
 * the holder does (src/identity/sql/holder_standing.sql). The debit applies the same rule again, in its transaction,
 * on the rows it locks.
 */
export async function payingAccount(auth: HolderAuth, accountId: string): Promise<AccountStanding> {
  const account = await auth.kept.getPart(`hld:${auth.holder.id}`, accountId, async () => standingOf(await getOwnAccount(auth.em, auth.holder, accountId)));
  assertOperating(account);
  return account;
}
payingAccount.raises = refusals(getOwnAccount, assertOperating);

const standingOf = ({ id, tenantId, holderId, agency, status, moneyRefusal }: Account): AccountStanding =>
  Object.freeze({ id, tenantId, holderId, agency, status, moneyRefusal });

/** A Pix account the API key reaches, ready to move money, with its holder. */
export async function operatingPixAccount(auth: IntegrationAuth, pixAccountId: string): Promise<{ account: Account; holder: Holder }> {
  const account = await scopedAccount(auth, pixAccountId);
  assertOperating(account);
  const holder = await auth.em.findOneOrFail(Holder, { id: account.holderId! });
  return { account, holder };
}
operatingPixAccount.raises = refusals(scopedAccount, assertOperating);
