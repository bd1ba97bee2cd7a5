import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { Holder } from '../identity/entities.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { trustedContactsAmong } from './store.ts';

/**
 * Step 1 of a TEV: who of the tenant can receive one, by document. An ACTIVE holder, with its APPROVED accounts
 * (oldest first), each with whether it is a trusted contact of the paying account now; anyone else, or a holder with
 * no such account, is 404 BENEFICIARY_NOT_FOUND.
 */
export async function findTevBeneficiary(
  em: EntityManager,
  payer: { id: string; tenantId: string },
  document: string,
): Promise<{ holder: Holder; accounts: { account: Account; trustedContact: boolean }[] }> {
  const holder = await em.findOne(Holder, { tenantId: payer.tenantId, document, status: 'ACTIVE' });
  const accounts = holder ? await em.find(Account, { holderId: holder.id, kind: 'HOLDER', status: 'APPROVED' }, { orderBy: { createdAt: 'asc' } }) : [];
  if (!holder || accounts.length === 0) throw new DomainError('BENEFICIARY_NOT_FOUND');
  const trusted = await trustedContactsAmong(em, payer.id, accounts);
  return { holder, accounts: accounts.map((account) => ({ account, trustedContact: trusted.has(account.id) })) };
}
findTevBeneficiary.raises = refusals('BENEFICIARY_NOT_FOUND');
