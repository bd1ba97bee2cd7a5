import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { OnboardingActivities } from '../activities/onboarding.ts';
import { kycPageOpened, kycResultReceived, onboardingState, type KycResult, type OnboardingInput, type OnboardingState } from './contracts/onboarding.ts';
import { DATABASE_STEP } from './activity-options.ts';

const activities = proxyActivities<OnboardingActivities>(DATABASE_STEP);

/**
 * One run per holder, started at registration: provisions the (PENDING) account, follows the holder through KYC and
 * applies the decision: ACTIVE holder and APPROVED account, or a blocked holder and a REJECTED account.
 */
export async function onboardingWorkflow(input: OnboardingInput): Promise<OnboardingState> {
  let state: OnboardingState = 'WAITING_FOR_KYC';
  let opened = false;
  let result: KycResult | undefined;
  setHandler(kycPageOpened, () => void (opened = true));
  setHandler(kycResultReceived, (r) => void (result ??= r));
  setHandler(onboardingState, () => state);

  await activities.provisionAccount(input.holderId);
  await condition(() => opened || result !== undefined);
  if (!result) {
    await activities.markOnboardingInProgress(input.holderId);
    state = 'IN_PROGRESS';
    await condition(() => result !== undefined);
  }
  const decision = result!;
  if (decision.approved) {
    await activities.approveOnboarding(input.holderId, decision);
    state = 'APPROVED';
  } else {
    await activities.rejectOnboarding(input.holderId, decision.reason ?? 'KYC rejected');
    state = 'REJECTED';
  }
  return state;
}
