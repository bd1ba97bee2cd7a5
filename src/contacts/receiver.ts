import type { EntityManager } from '@mikro-orm/postgresql';
import { PLATFORM_ISPB } from '../shared/institution.ts';
import { isTrustedNow } from './store.ts';

/** A payment's receiver as the payment names it: the Pix key paid, and the account the directory (or charge) gave. */
export interface PaymentReceiver {
  pixKey: string;
  beneficiary: { ispb: string; branch: string; account: string };
}

/**
 * Whether the receiver of a payment from the account is one of its trusted contacts now: by its key, or, for an
 * account of this platform, by its branch and number (an account contact is an account of the tenant; the same
 * numbers at another institution are another account).
 */
export async function isTrustedReceiver(em: EntityManager, accountId: string, { pixKey, beneficiary }: PaymentReceiver): Promise<boolean> {
  const here = beneficiary.ispb === PLATFORM_ISPB;
  return isTrustedNow(em, accountId, { pixKey, branch: here ? beneficiary.branch : null, account: here ? beneficiary.account : null });
}
