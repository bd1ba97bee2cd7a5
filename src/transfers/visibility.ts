import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound, refusals } from '../shared/errors.ts';
import { findTev, type TevRecord } from './store.ts';

/**
 * Who sees a transfer: its source always; its destination only once money arrived (DONE), because a refused or
 * pending transfer never reached it. Anyone else gets the same 404 as an unknown id.
 */
export async function tevSeenBy(em: EntityManager, account: { id: string; tenantId: string }, tevId: string): Promise<TevRecord> {
  const tev = await findTev(em, account.tenantId, tevId);
  const seen = tev && (tev.sourceAccountId === account.id || (tev.destinationAccountId === account.id && tev.status === 'DONE'));
  if (!seen) throw notFound('Transfer');
  return tev;
}
tevSeenBy.raises = refusals('NOT_FOUND');

/** A transfer the account sent, or null (a payout is read from the side that paid it). */
export async function tevSentBy(em: EntityManager, account: { id: string; tenantId: string }, tevId: string): Promise<TevRecord | null> {
  const tev = await findTev(em, account.tenantId, tevId);
  return tev?.sourceAccountId === account.id ? tev : null;
}
