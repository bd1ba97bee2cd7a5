import type { EntityManager } from '@mikro-orm/postgresql';
import type { DelayedEffectOutcome } from '../../workflows/contracts/delayed-effect.ts';
import { lockTrustState, markTrusted } from './store.ts';

/**
 * The delayed effect of adding a contact: once its wait is over, it is trusted from now on. Idempotent: a contact
 * trusted already stays as it is (APPLIED), one removed while it waited is left removed (CANCELLED). The row is locked, so a removal
 * racing this step comes before it (the contact is never trusted) or after it (trusted, then removed).
 */
export async function trustContact(em: EntityManager, contactId: string): Promise<DelayedEffectOutcome> {
  return em.transactional(async (tx) => {
    const state = await lockTrustState(tx, contactId);
    switch (state) {
      case 'REMOVED':
        return 'CANCELLED';
      case 'TRUSTED':
        return 'APPLIED';
      case 'DUE':
        await markTrusted(tx, contactId);
        return 'APPLIED';
      case 'WAITING':
        // The timer ran on Temporal's clock and the wait ends on the database's: retried until the two agree.
        throw new Error(`trusted contact ${contactId} is not due yet by the database clock`);
      case null:
        // Its hand-off commits with the contact: a run for a contact that does not exist is a defect, retried in view.
        throw new Error(`no trusted contact ${contactId}`);
    }
  });
}
