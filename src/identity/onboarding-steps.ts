/** What the onboarding workflow's steps do to the holder and its account: the KYC transitions. */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { provisionHolderAccount, setHolderAccountsStatus } from '../accounts/service.ts';
import type { KycResult } from '../../workflows/contracts/onboarding.ts';
import { Holder } from './entities.ts';

/** The holder's account, opened PENDING at registration's onboarding (idempotent: an existing account is kept). */
export async function provisionOnboardingAccount(em: EntityManager, holderId: string): Promise<string> {
  const holder = await em.findOneOrFail(Holder, { id: holderId });
  return (await provisionHolderAccount(em, holder)).id;
}

/** The holder opened the KYC page: a PENDING onboarding is now IN_PROGRESS. */
export async function markOnboardingInProgress(em: EntityManager, holderId: string): Promise<void> {
  await em.nativeUpdate(Holder, { id: holderId, onboardingStep: 'PENDING' }, { onboardingStep: 'IN_PROGRESS' });
}

/** KYC approved: the holder becomes ACTIVE (unless an operator blocked it meanwhile) and the account APPROVED. */
export async function approveOnboarding(em: EntityManager, holderId: string, kyc: KycResult): Promise<void> {
  await em.transactional(async (tx) => {
    const holder = await tx.findOneOrFail(Holder, { id: holderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    holder.onboardingStep = 'DONE';
    if (holder.status === 'PENDING') holder.status = 'ACTIVE';
    if (kyc.phone) {
      holder.phone = kyc.phone;
      holder.phoneConfirmed = true;
    }
    holder.kyc = { decision: 'APPROVED', decidedAt: new Date().toISOString(), ...(kyc.partner ? { partner: kyc.partner } : {}) };
    await setHolderAccountsStatus(tx, holderId, 'APPROVED');
  });
}

/** KYC rejected: the holder is blocked from operations and the account REJECTED. */
export async function rejectOnboarding(em: EntityManager, holderId: string, reason: string): Promise<void> {
  await em.transactional(async (tx) => {
    const holder = await tx.findOneOrFail(Holder, { id: holderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    holder.onboardingStep = 'REJECTED';
    holder.status = 'BLOCKED';
    holder.kyc = { decision: 'REJECTED', reason, decidedAt: new Date().toISOString() };
    await setHolderAccountsStatus(tx, holderId, 'REJECTED');
  });
}
