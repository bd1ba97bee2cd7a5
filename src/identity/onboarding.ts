import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import type { Services } from '../services.ts';
import { kycPageOpened, kycResultReceived, onboardingStart, type KycResult } from '../../workflows/contracts/onboarding.ts';
import type { Holder } from './entities.ts';

/**
 * The KYC page's signals (what a provider's callback would send) go through the durable hand-off as wakes: recorded
 * in PostgreSQL, then sent with signal-with-start, so a holder whose run is missing gets it, and a signal sent while
 * Temporal is unreachable is delivered when it comes back.
 */
async function wakeOnboarding({ orm, temporal, config }: Services, holder: Holder, signal: { name: string; args: unknown[] }): Promise<void> {
  const em = orm.em.fork();
  const handOff = await insertHandOff(em, config.TEMPORAL_TASK_QUEUE, onboardingStart(holder, signal));
  await dispatchHandOff(temporal.client, em, handOff);
}

export const signalKycPageOpened = (services: Services, holder: Holder) => wakeOnboarding(services, holder, { name: kycPageOpened.name, args: [] });

export const signalKycResult = (services: Services, holder: Holder, result: KycResult) =>
  wakeOnboarding(services, holder, { name: kycResultReceived.name, args: [result] });
