import type { Config } from '../config.ts';
import type { Holder } from './entities.ts';

/** Section 2.1: the holder as registration and authentication return it. */
export function holderView(config: Config, h: Holder) {
  return {
    id: h.id,
    email: h.email,
    emailConfirmation: h.emailConfirmed,
    phone: h.phone,
    phoneConfirmation: h.phoneConfirmed,
    name: h.name,
    document: h.document,
    status: h.status,
    onboardingStep: h.onboardingStep,
    onboardingLink: h.onboardingStep === 'DONE' ? null : `${config.publicBaseUrl}/onboarding/${h.onboardingRequisitionId}`,
    onboardingRequisitionId: h.onboardingRequisitionId,
    hasPin: h.pinHash !== null,
  };
}
