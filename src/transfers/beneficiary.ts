import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { Holder } from '../identity/entities.ts';
import { DomainError, refusals } from '../shared/errors.ts';

/**
 * Step 1 of a TEV: who of the tenant can receive one, by document. An ACTIVE holder, with its APPROVED accounts
 * (oldest first); anyone else, or a holder with no such account, is 404 BENEFICIARY_NOT_FOUND.
 */
export async function findTevBeneficiary(em: EntityManager, tenantId: string, document: string): Promise<{ holder: Holder; accounts: Account[] }> {
  const holder = await em.findOne(Holder, { tenantId, document, status: 'ACTIVE' });
  const accounts = holder ? await em.find(Account, { holderId: holder.id, kind: 'HOLDER', status: 'APPROVED' }, { orderBy: { createdAt: 'asc' } }) : [];
  if (!holder || accounts.length === 0) throw new DomainError('BENEFICIARY_NOT_FOUND');
  return { holder, accounts };
}
findTevBeneficiary.raises = refusals('BENEFICIARY_NOT_FOUND');
