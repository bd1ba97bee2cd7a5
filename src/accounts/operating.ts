import type { Config } from '../config.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { verifyPin } from '../identity/pin.ts';
import { assertOnboarded } from '../identity/service.ts';
import type { Account } from './entities.ts';
import { assertAccountOperational, getOwnAccount } from './service.ts';

/** The caller's own account, ready to move money: KYC done (else 403) and account APPROVED (else 403). */
export async function operatingAccount(auth: HolderAuth, accountId: string): Promise<Account> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  assertOnboarded(auth.holder);
  assertAccountOperational(account);
  return account;
}

/** Every write checks the PIN, except for client tokens of a PIN-exempt tenant. */
export async function authorizeWrite(auth: HolderAuth, config: Config, pin: string | undefined): Promise<void> {
  if (!auth.pinExempt) await verifyPin(auth.em, config, auth.holder, pin);
}
