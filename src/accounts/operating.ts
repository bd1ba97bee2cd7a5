import type { Config } from '../config.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { verifyPin } from '../identity/pin.ts';
import { Holder } from '../identity/entities.ts';
import { assertOnboarded } from '../identity/service.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { refusals } from '../shared/errors.ts';
import type { Account } from './entities.ts';
import { assertAccountOperational, getOwnAccount } from './service.ts';

/** The "operating account" rule, for both hosts: the holder is through KYC (else 403) and the account APPROVED (else 403). */
function assertOperating(holder: Holder, account: Account): void {
  assertOnboarded(holder);
  assertAccountOperational(account);
}
assertOperating.raises = refusals(assertOnboarded, assertAccountOperational);

/** The caller's own account, ready to move money. */
export async function operatingAccount(auth: HolderAuth, accountId: string): Promise<Account> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  assertOperating(auth.holder, account);
  return account;
}
operatingAccount.raises = refusals(getOwnAccount, assertOperating);

/** A Pix account the API key reaches, ready to move money, with its holder. */
export async function operatingPixAccount(auth: IntegrationAuth, pixAccountId: string): Promise<{ account: Account; holder: Holder }> {
  const account = await scopedAccount(auth, pixAccountId);
  const holder = await auth.em.findOneOrFail(Holder, { id: account.holderId! });
  assertOperating(holder, account);
  return { account, holder };
}
operatingPixAccount.raises = refusals(scopedAccount, assertOperating);

/** Every write checks the PIN, except for client tokens of a PIN-exempt tenant. */
export async function authorizeWrite(auth: HolderAuth, config: Config, pin: string | undefined): Promise<void> {
  if (!auth.pinExempt) await verifyPin(auth.em, config, auth.holder, pin);
}
authorizeWrite.raises = refusals(verifyPin);
