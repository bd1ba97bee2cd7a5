import { approveOnboarding, markOnboardingInProgress, provisionOnboardingAccount, rejectOnboarding } from '../src/identity/onboarding-steps.ts';
import type { KycResult } from '../workflows/contracts/onboarding.ts';
import type { ActivityDeps } from './deps.ts';

export function onboardingActivities({ orm }: ActivityDeps) {
  return {
    provisionAccount: (holderId: string) => provisionOnboardingAccount(orm.em.fork(), holderId),
    markOnboardingInProgress: (holderId: string) => markOnboardingInProgress(orm.em.fork(), holderId),
    approveOnboarding: (holderId: string, kyc: KycResult) => approveOnboarding(orm.em.fork(), holderId, kyc),
    rejectOnboarding: (holderId: string, reason: string) => rejectOnboarding(orm.em.fork(), holderId, reason),
  };
}
export type OnboardingActivities = ReturnType<typeof onboardingActivities>;
