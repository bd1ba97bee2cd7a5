import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import type { PlatformContext } from '../platform-context.ts';
import { kycPageOpened, kycResultReceived, onboardingStart, type KycResult } from '../../workflows/contracts/onboarding.ts';
import type { Holder } from './entities.ts';

/**
 * The KYC page's signals (what a provider's callback would send) go through the durable hand-off as wakes: recorded
 * in PostgreSQL, then sent with signal-with-start, so a holder whose run is missing gets it, and a signal sent while
 * Temporal is unreachable is delivered when it comes back.
 */
async function wakeOnboarding({ orm, temporal, config }: PlatformContext, holder: Holder, signal: { name: string; args: unknown[] }): Promise<void> {
  const em = orm.em.fork();
  const handOff = await insertHandOff(em, config.TEMPORAL_TASK_QUEUE, onboardingStart(holder, signal));
  await dispatchHandOff(temporal.client, em, handOff);
}

export const signalKycPageOpened = (platform: PlatformContext, holder: Holder) => wakeOnboarding(platform, holder, { name: kycPageOpened.name, args: [] });

export const signalKycResult = (platform: PlatformContext, holder: Holder, result: KycResult) =>
  wakeOnboarding(platform, holder, { name: kycResultReceived.name, args: [result] });
