/** The KYC provider's side of onboarding: its page opening and its decision, for a holder's onboarding requisition. */
import { holderAccounts } from '../accounts/service.ts';
import type { PlatformContext } from '../platform-context.ts';
import { DomainError, notFound, refusals, validationError } from '../shared/errors.ts';
import type { KycResult } from '../../workflows/contracts/onboarding.ts';
import { Holder } from './entities.ts';
import { signalKycPageOpened, signalKycResult } from './onboarding.ts';

/** The holder of a requisition; when the caller names a tenant, only in that tenant (else 404). */
export async function holderOfRequisition({ orm }: PlatformContext, requisitionId: number, tenantId: string | undefined): Promise<Holder> {
  const holder = await orm.em.fork().findOne(Holder, { onboardingRequisitionId: requisitionId, ...(tenantId ? { tenantId } : {}) });
  if (!holder) throw notFound('Onboarding requisition');
  return holder;
}
holderOfRequisition.raises = refusals('NOT_FOUND');

/** The holder opened the KYC page: a PENDING onboarding moves on. */
export async function openKycPage(platform: PlatformContext, holder: Holder): Promise<void> {
  if (holder.onboardingStep === 'PENDING') await signalKycPageOpened(platform, holder);
}

/** A company is approved only with its partner (owner): who answers for it. */
function assertKycResultComplete(holder: Holder, result: KycResult): void {
  if (result.approved && holder.type === 'COMPANY' && !result.partner) {
    throw validationError('A company needs its partner (owner) data to be approved', [
      { path: 'body.partnerName', message: 'required for companies' },
      { path: 'body.partnerDocument', message: 'required for companies (CPF)' },
    ]);
  }
}

export interface KycDecisionOutcome {
  /** The holder once the decision is applied; null when the worker has not applied it yet. */
  holder: Holder | null;
  accountStatus: string | null;
}

/**
 * The KYC decision for a requisition: refused when the onboarding already finished (409) or a company lacks its
 * partner (400); else sent to the holder's onboarding workflow, and waited for a little so callers see it applied.
 */
export async function decideKyc(platform: PlatformContext, holder: Holder, result: KycResult): Promise<KycDecisionOutcome> {
  if (holder.onboardingStep === 'DONE' || holder.onboardingStep === 'REJECTED') {
    throw new DomainError('ONBOARDING_FINISHED', { step: holder.onboardingStep });
  }
  assertKycResultComplete(holder, result);
  await signalKycResult(platform, holder, result);
  const applied = await waitForDecision(platform, holder.id);
  if (!applied) return { holder: null, accountStatus: null };
  const [account] = await holderAccounts(platform.orm.em.fork(), holder.id);
  return { holder: applied, accountStatus: account?.status ?? null };
}
decideKyc.raises = refusals('ONBOARDING_FINISHED');

/** The workflow applies the decision within milliseconds when a worker is up. */
async function waitForDecision({ orm }: PlatformContext, holderId: string): Promise<Holder | null> {
  for (let i = 0; i < 50; i++) {
    const h = await orm.em.fork().findOneOrFail(Holder, { id: holderId });
    if (h.onboardingStep === 'DONE' || h.onboardingStep === 'REJECTED') return h;
    await new Promise((r) => setTimeout(r, 200));
  }
  return null;
}
