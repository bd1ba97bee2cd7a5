import { LockMode } from '@mikro-orm/core';
import { provisionHolderAccount, setHolderAccountsStatus } from '../src/accounts/service.ts';
import { Holder } from '../src/identity/entities.ts';
import type { KycResult } from '../workflows/contracts/onboarding.ts';
import type { ActivityDeps } from './deps.ts';

export function onboardingActivities({ orm }: ActivityDeps) {
  return {
    async provisionAccount(holderId: string): Promise<string> {
      const em = orm.em.fork();
      const holder = await em.findOneOrFail(Holder, { id: holderId });
      return (await provisionHolderAccount(em, holder)).id;
    },

    async markOnboardingInProgress(holderId: string): Promise<void> {
      await orm.em.fork().nativeUpdate(Holder, { id: holderId, onboardingStep: 'PENDING' }, { onboardingStep: 'IN_PROGRESS' });
    },

    /** KYC approved: the holder becomes ACTIVE (unless an operator blocked it meanwhile) and the account APPROVED. */
    async approveOnboarding(holderId: string, kyc: KycResult): Promise<void> {
      await orm.em.fork().transactional(async (em) => {
        const holder = await em.findOneOrFail(Holder, { id: holderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        holder.onboardingStep = 'DONE';
        if (holder.status === 'PENDING') holder.status = 'ACTIVE';
        if (kyc.phone) {
          holder.phone = kyc.phone;
          holder.phoneConfirmed = true;
        }
        holder.kyc = { decision: 'APPROVED', decidedAt: new Date().toISOString(), ...(kyc.partner ? { partner: kyc.partner } : {}) };
        await setHolderAccountsStatus(em, holderId, 'APPROVED');
      });
    },

    /** KYC rejected: the holder is blocked from operations and the account REJECTED. */
    async rejectOnboarding(holderId: string, reason: string): Promise<void> {
      await orm.em.fork().transactional(async (em) => {
        const holder = await em.findOneOrFail(Holder, { id: holderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        holder.onboardingStep = 'REJECTED';
        holder.status = 'BLOCKED';
        holder.kyc = { decision: 'REJECTED', reason, decidedAt: new Date().toISOString() };
        await setHolderAccountsStatus(em, holderId, 'REJECTED');
      });
    },
  };
}
export type OnboardingActivities = ReturnType<typeof onboardingActivities>;
